import type { SavingsView } from '../model.js';
import { hours, money } from './format.js';
import { type Html, html } from './html.js';

/** Workgroups drawn in their own colour; the rest are stacked together as "other". */
export const CHART_SERIES = 6;

const WIDTH = 960;
const HEIGHT = 260;
const LEFT = 56;
const RIGHT = 8;
const TOP = 12;
const BOTTOM = 36;

/** The series the bars are stacked from: the span's top workgroups, then the rest in one. */
export function chartSeries(view: SavingsView): { label: string; members: string[]; palette: string }[] {
  const names = view.workgroups.map((w) => w.workgroup);
  const series = names
    .slice(0, CHART_SERIES)
    .map((name, i) => ({ label: name, members: [name], palette: `p${i}` }));
  const rest = names.slice(CHART_SERIES);
  // one more workgroup is drawn by its name: "1 other workgroups" named nothing
  if (rest.length === 1) series.push({ label: rest[0] as string, members: rest, palette: 'p6' });
  if (rest.length > 1)
    series.push({ label: `${rest.length} other workgroups`, members: rest, palette: 'p6' });
  return series;
}

/** A round top for the axis, at or above `max`: 1, 2 or 5 times a power of ten. */
function niceCeiling(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

const round = (n: number) => Math.round(n * 10) / 10;

/**
 * The per-day paused hours as stacked bars, one `<g class="bar">` per day with a `<title>` for
 * hover; the table beside it holds the same numbers for whoever cannot see the chart.
 */
export function savingsChart(view: SavingsView): Html {
  const series = chartSeries(view);
  const top = niceCeiling(Math.max(0, ...view.days.map((d) => d.pausedHours)));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, view.days.length);
  const barWidth = round(Math.max(2, slot * 0.72));
  // about six dates under the axis, whatever the span: every 5th day of 30
  const labelEvery = Math.max(1, Math.ceil(view.days.length / 6));
  const y = (h: number) => TOP + plotHeight - (h / top) * plotHeight;
  const ticks = [0, top / 2, top].map(
    (t) =>
      html`<line class="axis" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${round(y(t))}" y2="${round(y(t))}"/><text x="${LEFT - 6}" y="${round(y(t)) + 4}" text-anchor="end">${t} h</text>`,
  );
  const bars = view.days.map((day, i) => {
    const x = round(LEFT + i * slot + (slot - barWidth) / 2);
    let base = 0;
    const rects = series.map((s) => {
      const h = s.members.reduce((sum, name) => sum + (day.byWorkgroup[name]?.pausedHours ?? 0), 0);
      if (h <= 0) return '';
      const rect = html`<rect class="${s.palette}" x="${x}" y="${round(y(base + h))}" width="${barWidth}" height="${round(y(base) - y(base + h))}"/>`;
      base += h;
      return rect;
    });
    const label = i % labelEvery === 0 || i === view.days.length - 1;
    const title = `${day.date}: ${hours(day.pausedHours)} h paused${day.estimatedCost === null ? '' : `, ${money(day.estimatedCost, view.currency)}`}`;
    return html`<g class="bar"><title>${title}</title><rect class="hit" x="${round(LEFT + i * slot)}" y="${TOP}" width="${round(slot)}" height="${plotHeight}"/>${rects}${
      label
        ? html`<text x="${round(x + barWidth / 2)}" y="${HEIGHT - BOTTOM + 16}" text-anchor="middle">${day.date.slice(5)}</text>`
        : ''
    }</g>`;
  });
  const legend = series.map(
    (s) => html`<li><span class="swatch ${s.palette}" aria-hidden="true"></span> ${s.label}</li>`,
  );
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc">
<title id="chart-title">Paused hours per day</title>
<desc id="chart-desc">${`${view.days.length} days from ${view.days[0]?.date ?? view.since} to ${view.days.at(-1)?.date ?? view.until}, ${hours(view.total.pausedHours)} hours in total, stacked by workgroup; the table "Numbers per day" holds each day's figures.`}</desc>
${ticks}
<line class="axis" x1="${LEFT}" x2="${LEFT}" y1="${TOP}" y2="${TOP + plotHeight}"/>
${bars}
<text x="${LEFT}" y="${HEIGHT - 4}">UTC day (month-day)</text>
</svg>
${series.length > 0 ? html`<ul class="legend" aria-label="Workgroups in the chart">${legend}</ul>` : ''}`;
}
