import type { RunCounts, RunOutcome } from '../../../engine/index.js';
import { type Html, html } from './html.js';

/** `2026-11-25 20:06:36 UTC`; the text itself when it is not a date. */
export function utc(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** `just now`, `12 min`, `5 h`, `3 days`: a span as a person says it. */
export function span(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 45_000) return 'just now';
  const minutes = Math.round(abs / 60_000);
  const hours = Math.round(abs / 3_600_000);
  return minutes < 90 ? `${minutes} min` : hours < 48 ? `${hours} h` : `${Math.round(abs / 86_400_000)} days`;
}

/** `5 min ago`, `in 3 h`, `just now`: how far `iso` is from `now`. */
export function relative(iso: string, now: string): string {
  const diff = new Date(now).getTime() - new Date(iso).getTime();
  if (Number.isNaN(diff)) return '';
  const amount = span(diff);
  if (amount === 'just now') return amount;
  return diff > 0 ? `${amount} ago` : `in ${amount}`;
}

/** A moment as UTC text in a `<time>`, and how long ago (or ahead) it is when `now` is given. */
export function when(iso: string | undefined, now?: string): Html {
  if (!iso) return html`<span class="muted">–</span>`;
  const rel = now ? relative(iso, now) : '';
  return html`<time datetime="${iso}">${utc(iso)}</time>${rel ? html` <span class="rel">(${rel})</span>` : ''}`;
}

/** `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** `12 targets: 10 succeeded, 2 failed` (outcomes with none left out). */
export function counts(c: RunCounts): string {
  const parts = (['succeeded', 'planned', 'skipped', 'failed'] as const)
    .filter((k) => c[k] > 0)
    .map((k) => `${c[k]} ${k}`);
  const total = `${c.total} target${c.total === 1 ? '' : 's'}`;
  return parts.length > 0 ? `${total}: ${parts.join(', ')}` : total;
}

const OUTCOME_MARK: Record<string, string> = {
  succeeded: '✓',
  partial: '◐',
  failed: '✗',
  skipped: '–',
  missed: '!',
  cancelled: '⊘',
  halted: '■',
  planned: '…',
};

/** An outcome as a coloured badge that also says it in words and a mark. */
export function outcomeBadge(outcome: RunOutcome | string): Html {
  const mark = OUTCOME_MARK[outcome] ?? '?';
  return html`<span class="badge o-${OUTCOME_MARK[outcome] ? outcome : 'other'}"><span aria-hidden="true">${mark}</span> ${outcome}</span>`;
}

export function severityBadge(severity: string): Html {
  return html`<span class="badge sev-${severity}">${severity}</span>`;
}

export function hours(value: number): string {
  return value.toFixed(2);
}

/** As `nightshift savings` prints it: `12.50 EUR`; `–` for what was not priced. */
export function money(value: number | null, currency: string | null): string {
  return value === null || currency === null ? '–' : `${value.toFixed(2)} ${currency}`;
}
