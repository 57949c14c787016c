import { describe, expect, it } from 'vitest';
import {
  assetVersion,
  CONSOLE_CSS,
  CONSOLE_JS,
  type PageContext,
  renderFindings,
  renderFleet,
  renderRun,
  renderSavings,
  renderSchedules,
} from '../../../../src/ops/console/views/index.js';
import {
  ctx,
  findingsView,
  fleetView,
  runDetail,
  savingsView,
  schedulesView,
  unbalancedTags,
} from './view-models.js';

function everyPage(context: PageContext): Record<string, string> {
  return {
    schedules: renderSchedules(schedulesView(), context),
    run: renderRun(runDetail(), runDetail().runId, context),
    missingRun: renderRun(undefined, 'gone:1', context),
    fleet: renderFleet(fleetView(3, 20), context),
    savings: renderSavings(savingsView(), context),
    findings: renderFindings(findingsView(), context),
  };
}

describe('the console layout', () => {
  it('renders every page as one document whose tags nest', () => {
    for (const [name, page] of Object.entries(everyPage(ctx))) {
      expect(page.startsWith('<!doctype html>'), name).toBe(true);
      expect(unbalancedTags(page), name).toEqual([]);
    }
  });

  it('has nothing a `default-src self` policy blocks: no inline script, style, style attribute or event handler', () => {
    for (const [name, page] of Object.entries(everyPage(ctx))) {
      expect(page, name).not.toMatch(/<style|\sstyle=|\son[a-z]+=|javascript:/i);
      for (const script of page.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
        expect(script[1], name).toMatch(/\ssrc="/);
        expect(script[2], name).toBe('');
      }
    }
  });

  it('links the pages, the queue dashboard, the JSON and the versioned assets under the mount prefix', () => {
    const page = renderSchedules(schedulesView(), { base: '/ops', refreshMs: 0 });
    for (const href of [
      '/ops/',
      '/ops/fleet',
      '/ops/savings',
      '/ops/findings',
      '/ops/ui',
      '/ops/api/schedules',
    ])
      expect(page).toContain(`href="${href}"`);
    expect(page).toContain(`href="/ops/console/console.css?v=${assetVersion}"`);
    expect(page).toContain(`src="/ops/console/console.js?v=${assetVersion}"`);
    expect(page).toContain('data-refresh-ms="0"');
  });

  it('has a skip link to main, marks the current page in the nav and shows when the view was generated', () => {
    const page = renderFleet(fleetView(1, 3), ctx);
    expect(page).toContain('<a class="skip" href="#main">');
    expect(page).toContain('<main id="main"');
    expect(page).toMatch(/<a href="\/fleet" data-key="f" aria-current="page">Fleet<\/a>/);
    expect(page).toContain('<time datetime="2026-11-25T20:00:00.000Z">2026-11-25 20:00:00 UTC</time>');
    expect(page).toContain('data-refresh-ms="5000"');
  });

  it('versions the assets by their content', () => {
    expect(assetVersion).toMatch(/^[0-9a-f]{16}$/);
    expect(CONSOLE_CSS).toContain('prefers-color-scheme: dark');
    expect(CONSOLE_CSS).toContain(':focus-visible');
  });

  it('ships a script that parses, refreshes with no-store and the last ETag, and stores the theme', () => {
    expect(() => new Function(CONSOLE_JS)).not.toThrow();
    for (const part of [
      "cache: 'no-store'",
      "'If-None-Match'",
      'DOMParser',
      'localStorage',
      'visibilityState',
    ])
      expect(CONSOLE_JS).toContain(part);
  });
});
