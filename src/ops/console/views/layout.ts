import type { ConsoleAction, Role } from '../../access/roles.js';
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
  /** Who asks for the page; absent: nobody known (a page before sign-in). */
  user?: PageUser | undefined;
}

/** Who a page is rendered for, and which of its forms they get. */
export interface PageUser {
  readonly name: string;
  readonly role: Role;
  /** The CSRF token every form carries; undefined without a session, and then no forms. */
  readonly csrf: string | undefined;
  /** Whether the page offers to sign out (a signed-in session). */
  readonly signOut: boolean;
  /** What the last action said, shown once. */
  readonly flash: { readonly text: string; readonly ok: boolean } | undefined;
  /** Whether this user may make `action` here: the role allows it and the console can make changes. */
  readonly may: (action: ConsoleAction) => boolean;
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
    holds: `${base}/holds`,
    holdPreview: `${base}/holds/preview`,
    release: `${base}/holds/release`,
    audit: `${base}/audit`,
    login: `${base}/login`,
    logout: `${base}/logout`,
    suspend: (job: string) => `${base}/jobs/${encodeURIComponent(job)}/suspend`,
    unsuspend: (job: string) => `${base}/jobs/${encodeURIComponent(job)}/unsuspend`,
    runNow: (job: string) => `${base}/jobs/${encodeURIComponent(job)}/run`,
    cancel: (runId: string) => `${base}/runs/${encodeURIComponent(runId)}/cancel`,
    approve: (runId: string) => `${base}/runs/${encodeURIComponent(runId)}/approve`,
    reject: (runId: string) => `${base}/runs/${encodeURIComponent(runId)}/reject`,
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
      holds: `${base}/api/holds`,
      holdPreview: `${base}/api/holds/preview`,
      audit: `${base}/api/audit`,
    },
  };
}

export type NavKey = 'schedules' | 'fleet' | 'holds' | 'savings' | 'findings' | 'audit';

export interface PageOptions {
  title: string;
  /** The nav entry to mark as the current page; null for a page under none (a run). */
  active: NavKey | null;
  /** The JSON this page shows. */
  json: string;
  generatedAt: string;
  body: Html;
}

/** Who is signed in, and the sign-out button; a sign-in link on a page nobody known asked for. */
function whoBox(ctx: PageContext): Html {
  const { user } = ctx;
  const to = paths(ctx.base);
  if (!user) return html``;
  const out =
    user.signOut && user.csrf
      ? html`<form method="post" action="${to.logout}" class="inline"><input type="hidden" name="csrf" value="${user.csrf}"><button type="submit">Sign out</button></form>`
      : '';
  return html`<span class="who" id="who">${user.name} <span class="badge tag">${user.role}</span></span>${out}`;
}

/** What the last action said, once, as a status a screen reader announces. */
function flash(user: PageUser | undefined): Html {
  if (!user?.flash) return html``;
  return html`<div class="notice ${user.flash.ok ? 'info' : 'warn'} flash" role="status" id="flash"><p>${user.flash.text}</p></div>`;
}

function footNote(user: PageUser | undefined): string {
  if (!user?.csrf || !(user.may('hold') || user.may('cancel'))) return 'Read-only.';
  return `Signed in as ${user.name} (${user.role}): every change made here is recorded in the audit trail.`;
}

/** The nav entries and the key that goes to each after `g`. */
const NAV: { key: NavKey | 'queue'; label: string; shortcut: string }[] = [
  { key: 'schedules', label: 'Schedules', shortcut: 's' },
  { key: 'fleet', label: 'Fleet', shortcut: 'f' },
  { key: 'holds', label: 'Holds', shortcut: 'h' },
  { key: 'savings', label: 'Savings', shortcut: 'v' },
  { key: 'findings', label: 'Findings', shortcut: 'i' },
  { key: 'audit', label: 'Audit', shortcut: 'a' },
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
${whoBox(ctx)}
</div>
</header>
<main id="main" tabindex="-1">
<div class="page-head">
<h1>${options.title}</h1>
<p class="meta">Generated ${when(options.generatedAt)} · <a href="${options.json}">JSON</a></p>
</div>
${flash(ctx.user)}
${options.body}
</main>
<footer class="foot"><p>${footNote(ctx.user)} <span id="keys-hint" hidden>Press <kbd>?</kbd> for keyboard shortcuts.</span></p></footer>
<dialog id="keys" aria-labelledby="keys-title">
<h2 id="keys-title">Keyboard shortcuts</h2>
<ul class="plain">${shortcuts}<li><kbd>?</kbd> this list</li></ul>
<form method="dialog"><button type="submit">Close</button></form>
</dialog>
</body>
</html>
`}`;
}
