/**
 * The console's stylesheet, served as `/console/console.css` (no inline styles: the
 * Content-Security-Policy is `default-src 'self'`). Colours are custom properties: the system's
 * light or dark choice applies unless the theme toggle set `data-theme` on `<html>`.
 */
const LIGHT = `
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --border: #d1d9e0; --surface: #f6f8fa;
  --link: #0550ae; --focus: #0969da;
  --ok: #1a7f37; --ok-bg: #dafbe1; --warn: #7d4e00; --warn-bg: #fff8c5;
  --bad: #b3261e; --bad-bg: #ffebe9; --info: #0550ae; --info-bg: #ddf4ff; --neutral-bg: #eaeef2;
  --c-active: #2da44e; --c-stopped: #7a8ca3; --c-transition: #d4a72c; --c-bad: #cf222e; --c-mark: #1f2328;
  --p0: #0969da; --p1: #8250df; --p2: #bf3989; --p3: #1a7f37; --p4: #bc4c00; --p5: #4d6a8a; --p6: #8c959f;
  color-scheme: light;`;

const DARK = `
  --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --border: #3d444d; --surface: #151b23;
  --link: #4493f8; --focus: #4493f8;
  --ok: #3fb950; --ok-bg: #12261e; --warn: #d29922; --warn-bg: #272115;
  --bad: #f85149; --bad-bg: #2d1214; --info: #4493f8; --info-bg: #121d2f; --neutral-bg: #212830;
  --c-active: #2ea043; --c-stopped: #5a6b82; --c-transition: #bb8009; --c-bad: #da3633; --c-mark: #f0f6fc;
  --p0: #4493f8; --p1: #a371f7; --p2: #db61a2; --p3: #3fb950; --p4: #f0883e; --p5: #79a6d2; --p6: #6e7681;
  color-scheme: dark;`;

export const CONSOLE_CSS = `:root {${LIGHT}
}
@media (prefers-color-scheme: dark) {
  :root:not([data-theme="light"]) {${DARK}
  }
}
:root[data-theme="dark"] {${DARK}
}
*, *::before, *::after { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--fg); line-height: 1.45;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
a { color: var(--link); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
main:focus { outline: none; }
main:focus-visible { outline: 3px solid var(--focus); }
code, .mono, kbd, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
kbd { border: 1px solid var(--border); border-radius: 4px; padding: 0 4px; background: var(--surface); }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap;
}
.skip { position: absolute; left: -10000px; top: 0; background: var(--bg); padding: 8px 12px; z-index: 10; }
.skip:focus { left: 12px; top: 12px; }
.top {
  display: flex; flex-wrap: wrap; align-items: center; gap: 8px 24px; padding: 10px 24px;
  border-bottom: 1px solid var(--border); background: var(--surface);
}
.brand { font-weight: 700; font-size: 1.15rem; color: var(--fg); text-decoration: none; letter-spacing: 0.02em; }
.top nav ul { display: flex; flex-wrap: wrap; gap: 4px; list-style: none; margin: 0; padding: 0; }
.top nav a { display: block; padding: 6px 10px; border-radius: 6px; color: var(--fg); text-decoration: none; }
.top nav a:hover { background: var(--neutral-bg); }
.top nav a[aria-current="page"] { background: var(--neutral-bg); font-weight: 600; box-shadow: inset 0 -2px 0 var(--link); }
.tools { margin-left: auto; display: flex; align-items: center; gap: 12px; }
.live { color: var(--muted); font-size: 0.9em; }
button, select, input {
  font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--border);
  border-radius: 6px; padding: 5px 10px;
}
button { cursor: pointer; background: var(--surface); }
button:hover { background: var(--neutral-bg); }
main { padding: 16px 24px 32px; max-width: 1600px; }
.page-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; }
h1 { font-size: 1.5rem; margin: 0 0 8px; }
h2 { font-size: 1.2rem; margin: 28px 0 10px; }
h3 { font-size: 1rem; margin: 18px 0 6px; }
.meta, .muted, .rel { color: var(--muted); }
.meta { margin: 0; }
.foot { padding: 8px 24px 24px; color: var(--muted); border-top: 1px solid var(--border); }
.plain { list-style: none; padding: 0; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 12px; }
caption { text-align: left; color: var(--muted); padding: 4px 0; }
th, td { text-align: left; vertical-align: top; padding: 6px 10px; border-bottom: 1px solid var(--border); }
th { font-weight: 600; background: var(--surface); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:hover { background: var(--surface); }
tr.quiet td { background: var(--surface); }
.nowrap { white-space: nowrap; }
.ids { margin: 0; padding: 0; list-style: none; }
.ids li { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em; word-break: break-all; }
.badge {
  display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 0.85em; font-weight: 600;
  border: 1px solid currentColor; white-space: nowrap;
}
.o-succeeded { color: var(--ok); background: var(--ok-bg); }
.o-partial, .o-missed, .o-cancelled, .sev-warning, .tag-dry, .suspended { color: var(--warn); background: var(--warn-bg); }
.o-failed, .o-halted, .sev-critical { color: var(--bad); background: var(--bad-bg); }
.o-skipped, .o-planned, .o-other, .tag { color: var(--muted); background: var(--neutral-bg); }
.sev-info { color: var(--info); background: var(--info-bg); }
.notice { border: 1px solid var(--border); border-left-width: 6px; border-radius: 6px; padding: 10px 14px; margin: 12px 0; }
.notice h2 { margin: 0 0 6px; font-size: 1.05rem; }
.notice.bad { border-color: var(--bad); background: var(--bad-bg); }
.notice.warn { border-color: var(--warn); background: var(--warn-bg); }
.notice.info { border-color: var(--info); background: var(--info-bg); }
.notice ul { margin: 6px 0 0; padding-left: 20px; }
.problems li { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 8px 0 16px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
pre.json { background: var(--surface); border: 1px solid var(--border); border-radius: 6px; padding: 10px; overflow-x: auto; }
.stats { display: flex; flex-wrap: wrap; gap: 8px; list-style: none; padding: 0; margin: 8px 0; }
.stats li { border: 1px solid var(--border); border-radius: 6px; padding: 6px 12px; background: var(--surface); }
.stats strong { font-size: 1.15rem; margin-right: 4px; }
.filters { display: flex; flex-wrap: wrap; align-items: end; gap: 12px; margin: 12px 0; }
.filters label { display: flex; flex-direction: column; gap: 2px; color: var(--muted); font-size: 0.9em; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; list-style: none; padding: 0; margin: 8px 0; color: var(--muted); }
.legend li { display: flex; align-items: center; gap: 6px; }
.wg h3 .muted { font-weight: 400; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, 14px); gap: 3px; margin: 4px 0 8px; }
.cell {
  display: block; position: relative; width: 14px; height: 14px; border-radius: 2px;
  background: var(--c-bad); border: 1px solid transparent;
}
.stats .cell, td .cell, dd .cell { display: inline-block; vertical-align: -2px; }
.cell.s-a { background: var(--c-active); }
.cell.s-s { background: transparent; border: 2px solid var(--c-stopped); }
.cell.s-t { background: linear-gradient(135deg, var(--c-transition) 50%, transparent 50%); border-color: var(--c-transition); }
.cell.s-x::before {
  content: "\\00d7"; position: absolute; inset: 0; color: #fff; font: 700 12px/12px system-ui, sans-serif; text-align: center;
}
a.cell:hover { filter: brightness(0.8); }
.cell.h { outline: 2px solid var(--fg); outline-offset: 1px; }
.cell.hx { outline: 2px dashed var(--muted); outline-offset: 1px; }
.cell.d::after {
  content: ""; position: absolute; top: -2px; right: -2px;
  border-style: solid; border-width: 0 7px 7px 0; border-color: transparent var(--c-mark) transparent transparent;
}
.chart { width: 100%; max-width: 960px; height: auto; display: block; margin: 8px 0; }
.chart text { fill: var(--muted); font-size: 11px; }
.chart .axis { stroke: var(--border); }
.chart .hit { fill: transparent; }
.chart .bar:hover .hit { fill: var(--neutral-bg); }
.p0 { fill: var(--p0); background: var(--p0); } .p1 { fill: var(--p1); background: var(--p1); }
.p2 { fill: var(--p2); background: var(--p2); } .p3 { fill: var(--p3); background: var(--p3); }
.p4 { fill: var(--p4); background: var(--p4); } .p5 { fill: var(--p5); background: var(--p5); }
.p6 { fill: var(--p6); background: var(--p6); }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; }
details > summary { cursor: pointer; margin: 8px 0; }
dialog { background: var(--bg); color: var(--fg); border: 1px solid var(--border); border-radius: 8px; padding: 16px 24px; }
dialog::backdrop { background: rgb(0 0 0 / 0.4); }
/* Windows high contrast paints every background alike: the cells and swatches keep their own */
@media (forced-colors: active) { .cell, .swatch, .chart rect { forced-color-adjust: none; } }
/* the forms that change something: plain POSTs, the signed-in user beside the theme toggle */
.who { color: var(--muted); }
form.inline { display: inline; margin: 0; }
form.action { margin: 8px 0; }
form.action p, .hold-form p, .login p { margin: 6px 0; }
form.action label, .hold-form label, .login label { color: var(--muted); margin-right: 4px; }
details.suspend summary, details.run-now summary { cursor: pointer; color: var(--link); }
form.action textarea { display: block; width: 100%; max-width: 28em; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.lead { font-size: 1.1em; }
.flash { margin: 8px 0 16px; }
.flash p { white-space: pre-line; }
@media (max-width: 700px) { main, .top { padding-left: 12px; padding-right: 12px; } }
`;
