import { assetVersion } from './assets.js';
import { when } from './format.js';
import { type Html, html } from './html.js';

/** What every page needs to know of where and how it is served. */
export interface PageContext {
  /** The URL prefix the console is mounted under: '' when at `/`, else e.g. `/ops` (no trailing slash). */
  base: string;
  /** How often the page refreshes itself, in ms; 0 = never. */
  refreshMs: number;
  /** The moment the page is rendered at (ISO), for views that carry no `generatedAt`; default: now. */
  now?: string;
}

/** When the page is rendered: the context's moment, else now. */
export function renderedAt(ctx: PageContext): string {
  return ctx.now ?? new Date().toISOString();
}

/** Where each page and its JSON live, under `base`. */
export function paths(base: string) {
  return {
    schedules: `${base}/`,
    run: (runId: string) => `${base}/runs/${encodeURIComponent(runId)}`,
    /** A job's runs (every job's without one). */
    runs: (job?: string) => `${base}/runs${job === undefined ? '' : `?job=${encodeURIComponent(job)}`}`,
    fleet: `${base}/fleet`,
    /** One workspace's timeline. */
    workspace: (workgroupId: string, workspaceId: string) =>
      `${base}/fleet/${encodeURIComponent(workgroupId)}/${encodeURIComponent(workspaceId)}`,
    savings: `${base}/savings`,
    findings: `${base}/findings`,
    favicon: `${base}/favicon.ico`,
    /** Bull Board, the queue's dashboard. */
    queue: `${base}/ui`,
    css: `${base}/console/console.css?v=${assetVersion}`,
    js: `${base}/console/console.js?v=${assetVersion}`,
    api: {
      schedules: `${base}/api/schedules`,
      run: (runId: string) => `${base}/api/runs/${encodeURIComponent(runId)}`,
      runs: `${base}/api/runs`,
      fleet: `${base}/api/fleet`,
      workspace: (workgroupId: string, workspaceId: string) =>
        `${base}/api/fleet/${encodeURIComponent(workgroupId)}/${encodeURIComponent(workspaceId)}`,
      savings: `${base}/api/savings`,
      findings: `${base}/api/findings`,
    },
  };
}

export type NavKey = 'schedules' | 'fleet' | 'savings' | 'findings';

export interface PageOptions {
  title: string;
  /** The nav entry to mark as the current page; null for a page under none (a run). */
  active: NavKey | null;
  /** The JSON this page shows. */
  json: string;
  generatedAt: string;
  body: Html;
}

/** The nav entries and the key that goes to each after `g`. */
const NAV: { key: NavKey | 'queue'; label: string; shortcut: string }[] = [
  { key: 'schedules', label: 'Schedules', shortcut: 's' },
  { key: 'fleet', label: 'Fleet', shortcut: 'f' },
  { key: 'savings', label: 'Savings', shortcut: 'v' },
  { key: 'findings', label: 'Findings', shortcut: 'i' },
  { key: 'queue', label: 'Queue', shortcut: 'q' },
];

/** A whole document: header with nav, the page in `<main id="main">` (what a refresh swaps), the key help. */
export function page(ctx: PageContext, options: PageOptions): string {
  const to = paths(ctx.base);
  const nav = NAV.map(
    (entry) =>
      html`<li><a href="${to[entry.key]}" data-key="${entry.shortcut}"${entry.key === options.active ? html` aria-current="page"` : ''}>${entry.label}</a></li>`,
  );
  const shortcuts = NAV.map(
    (entry) => html`<li><kbd>g</kbd> <kbd>${entry.shortcut}</kbd> ${entry.label}</li>`,
  );
  return `<!doctype html>\n${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · nightshift</title>
<link rel="stylesheet" href="${to.css}">
<link rel="icon" href="${to.favicon}">
<script src="${to.js}"></script>
</head>
<body data-refresh-ms="${Math.max(0, Math.round(ctx.refreshMs))}">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<a class="brand" href="${to.schedules}">nightshift</a>
<nav aria-label="Console"><ul>${nav}</ul></nav>
<div class="tools">
<span id="live-status" class="live"><span id="live-word" aria-live="polite"></span> <span id="live-time"></span></span>
<button type="button" id="theme-toggle" hidden>Theme</button>
</div>
</header>
<main id="main" tabindex="-1">
<div class="page-head">
<h1>${options.title}</h1>
<p class="meta">Generated ${when(options.generatedAt)} · <a href="${options.json}">JSON</a></p>
</div>
${options.body}
</main>
<footer class="foot"><p>Read-only. <span id="keys-hint" hidden>Press <kbd>?</kbd> for keyboard shortcuts.</span></p></footer>
<dialog id="keys" aria-labelledby="keys-title">
<h2 id="keys-title">Keyboard shortcuts</h2>
<ul class="plain">${shortcuts}<li><kbd>?</kbd> this list</li></ul>
<form method="dialog"><button type="submit">Close</button></form>
</dialog>
</body>
</html>
`}`;
}
