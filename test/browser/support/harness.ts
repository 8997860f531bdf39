/**
 * The browser suites' harness: a whole Weft in this process (startE2E: own database, API on a free
 * loopback port serving the console's build, workers, scheduler, the demo order service), one
 * real Chromium (Debian's, driven by playwright-core; never a downloaded one), and a fresh
 * browser context per test that may reach nothing but 127.0.0.1.
 *
 * Each test gets a {@link Tab}. A test fails when the page tried to reach another host (the
 * request or socket is refused and its URL recorded: a page that loads a CDN asset fails), threw
 * an uncaught error, or broke the Content-Security-Policy. A failing test saves a screenshot to
 * test/browser/screenshots/<test name>.png and names it, with the page's console errors, in its
 * error.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, it } from '@jest/globals';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startE2E, type E2E } from '../../support/e2e-platform.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The console's build the API serves: `WEFT_CONSOLE_DIR` when set (as for the API), else dist/console. */
export const CONSOLE_BUILD = process.env.WEFT_CONSOLE_DIR || join(ROOT, 'dist/console');

/** Where a failing test's screenshot goes (gitignored). */
export const SCREENSHOTS = join(ROOT, 'test/browser/screenshots');

/** The Chromium the suites drive: Debian's package, or `WEFT_CHROMIUM`. */
export const CHROMIUM = process.env.WEFT_CHROMIUM || '/usr/bin/chromium';

/**
 * How long a wait for something on the page may take: it polls, so a quick page costs nothing,
 * and a loaded machine (the platform runs in this same process, the cores are shared) has room.
 * Below a browser test's 120 s timeout, so a wait that fails names what it waited for.
 */
export const WAIT_MS = 90_000;

/** What one test has: its page and what the harness saw the page do. */
export interface Tab {
  page: Page;
  context: BrowserContext;
  /** The API's origin, `http://127.0.0.1:<port>`. */
  origin: string;
  /** URLs the page tried to reach outside 127.0.0.1 (requests and WebSockets); each was refused. */
  blocked: string[];
  /** Uncaught errors thrown in the page. */
  pageErrors: string[];
  /** The page's console errors (shown when the test fails; a 401 answer is one, so they do not fail it). */
  consoleErrors: string[];
  /** Content-Security-Policy violations the page reported. */
  cspViolations: string[];
  /** Another page in the same context (its own sessionStorage), watched like the first. */
  newPage(): Promise<Page>;
}

export interface TestOptions {
  viewport?: { width: number; height: number };
  timeout?: number;
}

export interface BrowserSuite {
  /** The platform of this suite (started in beforeAll). */
  readonly e2e: E2E;
  /** The API's origin, `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** Declares a test that runs `body` in a fresh, loopback-only browser context. */
  test(name: string, body: (tab: Tab) => Promise<void>, opts?: TestOptions): void;
  /** A fresh tab outside a declared test (e.g. in a helper), closed by the caller. */
  open(opts?: TestOptions): Promise<Tab & { close(): Promise<void> }>;
}

/** Fails with the command to run when the console was not built (the API would serve no page). */
export function assertConsoleBuilt(dir = CONSOLE_BUILD): void {
  if (!existsSync(join(dir, 'index.html')) || !existsSync(join(dir, 'ide.html'))) {
    throw new Error(`The console is not built (${join(dir, 'index.html')} is missing): run npm run build:console first.`);
  }
}

/** Launches the suites' Chromium headless (no sandbox: CI runs as root in a container). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium) or set WEFT_CHROMIUM to a Chromium binary.`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
}

/** True for the only host a page may reach. */
export function isLoopback(url: string): boolean {
  try {
    return new URL(url).hostname === '127.0.0.1';
  } catch {
    return false;
  }
}

/**
 * A new browser context of `browser` that refuses every request and WebSocket not to 127.0.0.1
 * (recording it), with one page that records uncaught errors, console errors and CSP violations.
 */
export async function openTab(browser: Browser, origin: string, opts: TestOptions = {}): Promise<Tab & { close(): Promise<void> }> {
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 900 }, baseURL: origin });
  const tab: Omit<Tab, 'page' | 'newPage'> = { context, origin, blocked: [], pageErrors: [], consoleErrors: [], cspViolations: [] };
  // data: and blob: URLs never reach the network (route does not see them); everything else must be loopback.
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (isLoopback(url)) return route.continue();
    tab.blocked.push(url);
    return route.abort('blockedbyclient');
  });
  await context.routeWebSocket(
    (url) => !isLoopback(url.href),
    (ws) => {
      tab.blocked.push(ws.url());
      return ws.close({ code: 1008, reason: 'blocked by the test harness: not 127.0.0.1' });
    },
  );
  const newPage = async () => {
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    // A rejected non-Error (e.g. a CloseEvent) arrives with an empty message and stack: name what there is.
    page.on('pageerror', (error) =>
      tab.pageErrors.push(error.stack || error.message || `${error.name || 'a thrown value that is not an Error'} (${String(error)})`),
    );
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const text = message.text();
      tab.consoleErrors.push(text);
      if (/Content Security Policy/i.test(text)) tab.cspViolations.push(text);
    });
    return page;
  };
  const page = await newPage();
  return { ...tab, page, newPage, close: () => context.close() };
}

/** `name` as a file name: letters, digits, `-` and `_`. */
export function fileName(name: string): string {
  return (
    name
      .replace(/[^\w-]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 150) || 'test'
  );
}

/**
 * Starts a platform and a Chromium for the `describe` block it is called in (beforeAll), and
 * stops both after it (afterAll). `env` adds to the platform's configuration.
 */
export function browserSuite(opts: { env?: Record<string, string | number> } = {}): BrowserSuite {
  let e2e: E2E | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    assertConsoleBuilt();
    browser = await launchChromium();
    e2e = await startE2E(opts.env);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await e2e?.close();
  }, 60_000);

  const suite: BrowserSuite = {
    get e2e() {
      if (!e2e) throw new Error('the browser suite did not start (see its beforeAll error)');
      return e2e;
    },
    get origin() {
      return new URL(suite.e2e.url).origin;
    },
    open(testOpts) {
      if (!browser) throw new Error('the browser suite did not start (see its beforeAll error)');
      return openTab(browser, suite.origin, testOpts);
    },
    test(name, body, testOpts = {}) {
      it(
        name,
        async () => {
          const tab = await suite.open(testOpts);
          try {
            await body(tab);
            if (tab.blocked.length) throw new Error(`the page tried to reach hosts other than 127.0.0.1:\n  ${tab.blocked.join('\n  ')}`);
            if (tab.pageErrors.length) throw new Error(`the page threw:\n  ${tab.pageErrors.join('\n  ')}`);
            if (tab.cspViolations.length) throw new Error(`the page broke its Content-Security-Policy:\n  ${tab.cspViolations.join('\n  ')}`);
          } catch (error) {
            throw await withScreenshot(error, tab, name);
          } finally {
            await tab.close();
          }
        },
        testOpts.timeout ?? 120_000,
      );
    },
  };
  return suite;
}

/** `error` with the path of a screenshot of the page and what the page logged and threw. */
async function withScreenshot(error: unknown, tab: Tab, name: string): Promise<Error> {
  const failure = error instanceof Error ? error : new Error(String(error));
  const notes: string[] = [];
  mkdirSync(SCREENSHOTS, { recursive: true });
  // The test's first page is <name>.png; a second one (Tab.newPage) is <name>-2.png, and so on.
  for (const [i, page] of tab.context.pages().entries()) {
    const path = join(SCREENSHOTS, `${fileName(name)}${i ? `-${i + 1}` : ''}.png`);
    try {
      await page.screenshot({ path, fullPage: true, timeout: 10_000 });
      notes.push(`screenshot: ${path} (${page.url()})`);
    } catch (e) {
      notes.push(`no screenshot of ${page.url()}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (tab.blocked.length) notes.push(`blocked requests:\n  ${tab.blocked.join('\n  ')}`);
  if (tab.pageErrors.length) notes.push(`uncaught page errors:\n  ${tab.pageErrors.join('\n  ')}`);
  if (tab.consoleErrors.length) notes.push(`console errors:\n  ${tab.consoleErrors.slice(-20).join('\n  ')}`);
  failure.message = `${failure.message}\n\n${notes.join('\n')}`;
  return failure;
}
