/**
 * The console in a real Chromium against a whole platform: sign-in with good, bad, viewer and
 * revoked keys, and the phone-width layout of the sign-in page and the shell.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { publish, start, waitRun } from '../support/e2e-platform.js';
import { apiAnswer, createKey, horizontalOverflow, keyField, nav, navLinks, openSignIn, revokeKey, signIn, storedKey, submitKey } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('console in the browser', () => {
  const suite = browserSuite();

  it('refuses and records what a page tries to reach beyond 127.0.0.1 (the harness itself)', async () => {
    const tab = await suite.open();
    try {
      // TEST-NET-1 (192.0.2.0/24) is never routed, and the harness refuses it before anything is sent.
      const elsewhere = await tab.newPage();
      const navigation = await elsewhere.goto('http://192.0.2.1/cdn/lib.js').then(
        () => 'loaded',
        (e: Error) => e.message,
      );
      expect(navigation).toMatch(/ERR_BLOCKED_BY_CLIENT/);
      await elsewhere.close();
      await openSignIn(tab.page);
      const outcome = await tab.page.evaluate(async () => {
        const g = globalThis as unknown as {
          fetch(url: string): Promise<unknown>;
          WebSocket: new (url: string) => { onclose: (() => void) | null; onerror: (() => void) | null };
        };
        const fetched = await g.fetch('http://192.0.2.1/api').then(
          () => 'loaded',
          () => 'refused',
        );
        const socket = await new Promise<string>((resolve) => {
          const ws = new g.WebSocket('ws://192.0.2.1/socket');
          ws.onerror = () => resolve('refused');
          ws.onclose = () => resolve('refused');
        });
        return { fetched, socket };
      });
      expect(outcome).toEqual({ fetched: 'refused', socket: 'refused' });
      expect(tab.blocked).toEqual(['http://192.0.2.1/cdn/lib.js', 'ws://192.0.2.1/socket']);
      // The console's own policy (connect-src 'self') stopped the fetch before the network: a violation.
      expect(tab.cspViolations.join('\n')).toContain('http://192.0.2.1/api');
    } finally {
      await tab.close();
    }
  });

  suite.test('signs in with the admin key and shows the navigation', async ({ page }) => {
    const { apiKey } = await suite.e2e.tenant('console-admin');
    await openSignIn(page);
    expect(await page.title()).toBe('Weft console');
    await submitKey(page, apiKey);
    await nav(page).waitFor();
    expect(await navLinks(page)).toEqual(expect.arrayContaining(['Runs', 'Workflows', 'Queues', 'Keys']));
    // `/` opens the runs page; the key's name and its role are shown apart.
    await page.waitForURL('**/runs');
    await page
      .locator('.caller .role')
      .filter({ hasText: /^role admin$/ })
      .waitFor();
    expect(await page.locator('.caller .key-name').count()).toBe(1);
    // The key stays for this tab: a reload signs in again without the form.
    await page.reload();
    await nav(page).waitFor();
    expect(await keyField(page).count()).toBe(0);
  });

  suite.test("refuses a bad key with the API's words and stays signed out", async ({ page }) => {
    const bad = 'weft_this-key-does-not-exist';
    const answer = await apiAnswer(suite.e2e, bad, '{ whoami { role } }');
    expect(answer.status).toBe(401);
    expect(answer.message).toBeTruthy();
    await openSignIn(page);
    await submitKey(page, bad);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain(answer.message);
    expect(await nav(page).count()).toBe(0);
    expect(await keyField(page).isVisible()).toBe(true);
    expect(await storedKey(page)).toBeNull();
    // A key refused at sign-in was never signed in: no "revoked" notice.
    expect(await page.getByRole('status').count()).toBe(0);
  });

  suite.test('signs the page out when a request meets its revoked key', async ({ page }) => {
    const { client: admin } = await suite.e2e.tenant('console-revoke');
    const second = await createKey(admin, 'browser-second', 'admin');
    // The workflows and keys pages read over HTTP only (no socket): the next request is refused.
    await signIn(page, second.secret, '/workflows');
    await revokeKey(admin, second.id);
    await nav(page).getByRole('link', { name: 'Keys' }).click();
    await keyField(page).waitFor({ timeout: WAIT_MS });
    await page
      .getByRole('status')
      .filter({ hasText: /revoked|sign in again/i })
      .waitFor();
    expect(await nav(page).count()).toBe(0);
    expect(await storedKey(page)).toBeNull();
    // Reloaded, the tab stays signed out: the key is gone from it.
    await page.reload();
    await keyField(page).waitFor();
    expect(await nav(page).count()).toBe(0);
  });

  suite.test('shows a viewer no Keys link', async ({ page }) => {
    const { client: admin } = await suite.e2e.tenant('console-viewer');
    const viewer = await createKey(admin, 'browser-viewer', 'viewer');
    await signIn(page, viewer.secret);
    await page
      .locator('.caller .role')
      .filter({ hasText: /^role viewer$/ })
      .waitFor();
    expect(await page.locator('.caller .key-name').textContent()).toBe('browser-viewer');
    const links = await navLinks(page);
    expect(links).toEqual(expect.arrayContaining(['Runs', 'Workflows', 'Queues']));
    expect(links).not.toContain('Keys');
  });

  suite.test(
    'fits a phone: no sideways scrolling at 390 px, signed out and signed in',
    async ({ page }) => {
      const { apiKey, client } = await suite.e2e.tenant('console-phone');
      // A run, so the list has a row and there is a run page (graph, tasks, history) to lay out.
      await publish(client, 'order-flow', await readFile(join(ROOT, 'examples/order-flow.yaml'), 'utf8'));
      const runId = await start(client, 'order-flow', { order_id: '1001' }, { config: { shop_url: suite.e2e.shop.url } });
      await waitRun(client, runId);
      await openSignIn(page);
      const signedOut = await horizontalOverflow(page);
      expect(signedOut.scrollWidth).toBeLessThanOrEqual(390);
      expect(signedOut.bodyScrollWidth).toBeLessThanOrEqual(390);
      await submitKey(page, apiKey);
      await nav(page).waitFor();
      // Each page once it shows what it read (the run's row, the workflow), or at least its heading.
      const shown = {
        '/runs': page.locator(`tr[data-run-id="${runId}"]`),
        '/workflows': page.locator('main').getByText('order-flow').first(),
        '/queues': page.locator('main h1').first(),
        '/keys': page.locator('main h1').first(),
      };
      for (const [path, ready] of Object.entries(shown)) {
        await nav(page)
          .getByRole('link', { name: path.slice(1), exact: false })
          .first()
          .click();
        await page.waitForURL(`**${path}`, { timeout: WAIT_MS });
        await ready.waitFor();
        const signedIn = await horizontalOverflow(page);
        // The path in the comparison names the page that overflows.
        expect({ path, fits: signedIn.scrollWidth <= 390 && signedIn.bodyScrollWidth <= 390, ...signedIn }).toEqual({ ...signedIn, path, fits: true });
      }
      await page.goto(`/runs/${runId}`);
      await page.locator('[data-node-id="ship"]').waitFor();
      const runPage = await horizontalOverflow(page);
      expect(runPage.scrollWidth).toBeLessThanOrEqual(390);
      expect(runPage.bodyScrollWidth).toBeLessThanOrEqual(390);
    },
    { viewport: { width: 390, height: 800 } },
  );
});
