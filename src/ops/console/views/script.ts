/**
 * The console's one script, served as `/console/console.js` (a Content-Security-Policy of
 * `default-src 'self'` forbids inline scripts). Plain ES2020, no build step. Every page works
 * without it; it adds the theme toggle, the self-refresh of `#main` and keyboard shortcuts.
 * Loaded in `<head>` without `defer` so a stored theme applies before the first paint.
 */
export const CONSOLE_JS = `(() => {
  'use strict';
  const THEME_KEY = 'nightshift-theme';
  const THEMES = ['system', 'light', 'dark'];
  const root = document.documentElement;

  function readTheme() {
    try {
      const value = localStorage.getItem(THEME_KEY);
      return THEMES.includes(value) ? value : 'system';
    } catch {
      return 'system';
    }
  }

  function applyTheme(theme) {
    if (theme === 'system') delete root.dataset.theme;
    else root.dataset.theme = theme;
  }

  let theme = readTheme();
  applyTheme(theme);

  function setUpThemeToggle() {
    const button = document.getElementById('theme-toggle');
    if (!button) return;
    const label = () => {
      button.textContent = 'Theme: ' + theme;
    };
    label();
    button.hidden = false;
    button.addEventListener('click', () => {
      theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
      try {
        if (theme === 'system') localStorage.removeItem(THEME_KEY);
        else localStorage.setItem(THEME_KEY, theme);
      } catch {
        // storage refused (private mode): the choice lasts for this page only
      }
      applyTheme(theme);
      label();
    });
  }

  /** The focused element inside main, described so it can be found again in the new content. */
  function focusOf(main) {
    const el = document.activeElement;
    if (!el || el === main || !main.contains(el)) return null;
    return { id: el.id, tag: el.tagName.toLowerCase(), href: el.getAttribute('href'), name: el.getAttribute('name') };
  }

  function refocus(main, focus) {
    if (!focus) return;
    let el = null;
    if (focus.id) el = document.getElementById(focus.id);
    else if (focus.href) el = main.querySelector(focus.tag + '[href="' + CSS.escape(focus.href) + '"]');
    else if (focus.name) el = main.querySelector(focus.tag + '[name="' + CSS.escape(focus.name) + '"]');
    if (el && el !== document.activeElement) el.focus({ preventScroll: true });
  }

  function swap(doc) {
    const main = document.getElementById('main');
    const next = doc.getElementById('main');
    if (!main || !next) return false;
    const focus = focusOf(main);
    const open = Array.from(main.querySelectorAll('details[id]'))
      .filter((d) => d.open)
      .map((d) => d.id);
    const x = window.scrollX;
    const y = window.scrollY;
    // a copy first: moving a node out of the live childNodes would skip its neighbour
    main.replaceChildren(...Array.from(next.childNodes));
    if (doc.title) document.title = doc.title;
    for (const id of open) {
      const details = document.getElementById(id);
      if (details && details.tagName === 'DETAILS') details.open = true;
    }
    refocus(main, focus);
    window.scrollTo(x, y);
    return true;
  }

  /** As the server words a span: just now, 12 min, 5 h, 3 days. */
  function spanText(ms) {
    const abs = Math.abs(ms);
    if (abs < 45000) return 'just now';
    const minutes = Math.round(abs / 60000);
    const hours = Math.round(abs / 3600000);
    return minutes < 90 ? minutes + ' min' : hours < 48 ? hours + ' h' : Math.round(abs / 86400000) + ' days';
  }

  /**
   * An unchanged page (304) keeps its markup, whose "(5 min ago)" would grow stale: each one
   * that follows a <time datetime> is worded again from this browser's clock.
   */
  function rewordRelativeTimes() {
    const now = Date.now();
    for (const rel of document.querySelectorAll('#main time[datetime] + .rel')) {
      const at = Date.parse(rel.previousElementSibling.getAttribute('datetime'));
      if (Number.isNaN(at)) continue;
      const amount = spanText(now - at);
      rel.textContent = '(' + (amount === 'just now' ? amount : now > at ? amount + ' ago' : 'in ' + amount) + ')';
    }
  }

  /** True while a refresh would get in the way: a form control in use or typed in, or text selected. */
  function interacting() {
    const el = document.activeElement;
    if (el && el.matches('input, select, textarea, [contenteditable]')) return true;
    if (document.querySelector('#main form[data-edited]')) return true;
    const selection = window.getSelection ? window.getSelection() : null;
    return Boolean(selection && !selection.isCollapsed && String(selection).trim());
  }

  function setUpRefresh() {
    const every = Number(document.body.dataset.refreshMs);
    if (!(every > 0) || !window.fetch || !window.DOMParser) return;
    const word = document.getElementById('live-word');
    const time = document.getElementById('live-time');
    const say = (text, stamped) => {
      // the polite region only changes with the state, so a screen reader hears "offline" once, not every tick
      if (word && word.textContent !== text) word.textContent = text;
      if (time) time.textContent = stamped ? new Date().toLocaleTimeString([], { hour12: false }) : '';
    };
    let etag = null;
    let busy = false;
    let last = Date.now();

    async function refresh() {
      if (busy) return;
      busy = true;
      try {
        const headers = etag ? { 'If-None-Match': etag } : {};
        // a server that stopped answering shows as offline, not as a page that never refreshes again
        const signal = AbortSignal.timeout ? AbortSignal.timeout(Math.max(15000, 2 * every)) : undefined;
        const response = await fetch(window.location.href, { cache: 'no-store', headers, credentials: 'same-origin', signal });
        const html = (response.headers.get('Content-Type') || '').includes('text/html');
        if (response.status === 304) {
          rewordRelativeTimes();
          say('updated', true);
        }
        else if (html && (response.ok || response.status === 404)) {
          etag = response.headers.get('ETag');
          const text = await response.text();
          swap(new DOMParser().parseFromString(text, 'text/html'));
          say('updated', true);
        } else say('answer ' + response.status + ', retrying', true);
      } catch {
        say('offline, retrying', true);
      } finally {
        busy = false;
        last = Date.now();
      }
    }

    async function tick() {
      if (document.visibilityState === 'visible' && !interacting()) await refresh();
      setTimeout(tick, every);
    }

    setTimeout(tick, every);
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && Date.now() - last >= every && !interacting()) refresh();
    });
  }

  function setUpKeys() {
    const dialog = document.getElementById('keys');
    const hint = document.getElementById('keys-hint');
    if (hint) hint.hidden = false;
    let pending = 0;
    document.addEventListener('keydown', (event) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      const target = event.target;
      if (target instanceof Element && target.closest('input, select, textarea, [contenteditable], dialog')) return;
      if (event.key === '?') {
        if (dialog && typeof dialog.showModal === 'function' && !dialog.open) dialog.showModal();
        event.preventDefault();
        return;
      }
      if (pending) {
        clearTimeout(pending);
        pending = 0;
        const link = document.querySelector('header a[data-key="' + CSS.escape(event.key) + '"]');
        if (link) {
          event.preventDefault();
          window.location.assign(link.href);
        }
        return;
      }
      if (event.key === 'g') {
        pending = setTimeout(() => {
          pending = 0;
        }, 1500);
      }
    });
  }

  /** A form someone typed in keeps what they typed: the page stops refreshing itself until it is sent. */
  function setUpEditedForms() {
    document.addEventListener('input', (event) => {
      const form = event.target instanceof Element ? event.target.closest('#main form') : null;
      if (form) form.dataset.edited = 'true';
    });
  }

  document.addEventListener('DOMContentLoaded', () => {
    setUpThemeToggle();
    setUpEditedForms();
    setUpRefresh();
    setUpKeys();
  });
})();
`;
