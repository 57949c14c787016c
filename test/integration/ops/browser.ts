import { existsSync } from 'node:fs';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Debian's chromium, headless. CI installs it (.ci/run): a missing browser is a broken machine, not a reason to skip. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `No chromium at ${CHROMIUM}: the browser tests need a real browser. ` +
        'Install it (apt-get install -y chromium) or point CHROMIUM_PATH at one.',
    );
  return chromium.launch({ executablePath: CHROMIUM, headless: true });
}

/** A page on `origin` that records what a reviewer of a closed-network page asks. */
export interface RecordedPage {
  context: BrowserContext;
  page: Page;
  /** Every request the page would have sent to another host (aborted, so none leaves the machine). */
  outside: string[];
  /** Script errors and console errors. */
  scriptErrors: string[];
  /** Responses of 400 and above, as `<status> <url>`. */
  failures: string[];
}

export async function recordedPage(
  browser: Browser,
  origin: string,
  options: BrowserContextOptions = {},
): Promise<RecordedPage> {
  const context = await browser.newContext(options);
  const outside: string[] = [];
  await context.route(
    (target) => !target.href.startsWith(origin),
    (route) => {
      outside.push(route.request().url());
      return route.abort();
    },
  );
  const page = await context.newPage();
  const scriptErrors: string[] = [];
  page.on('pageerror', (error) => scriptErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') scriptErrors.push(message.text());
  });
  const failures: string[] = [];
  page.on('response', (response) => {
    if (response.url().startsWith(origin) && response.status() >= 400)
      failures.push(`${response.status()} ${response.url()}`);
  });
  return { context, page, outside, scriptErrors, failures };
}
