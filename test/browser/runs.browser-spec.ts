/**
 * The runs pages in a real Chromium, on the demo's order flow (examples/order-flow.yaml): runs
 * reaching their end live on /runs and on a run's page, a signal and a retry sent from the page,
 * what a viewer is not offered, the API's words for a refused action, and the sign-out of a tab
 * whose key is revoked while its live page is open.
 *
 * The selectors are the runs pages' contract: `tr[data-run-id]` rows on /runs; on /runs/<id>
 * `[data-testid="run-status"]`, graph nodes `[data-node-id]` (role=button, `data-status`), and
 * the fields "Signal name", "Payload (JSON)", "Retry from node", "Input (JSON)", "Version" with
 * the buttons "Send signal", "Retry run", "Cancel run", "Pause run".
 *
 * `WEFT_CONSOLE_SCREENSHOT=1` also saves the finished large order's page, 1280×900, to
 * docs/console-run.png.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect } from '@jest/globals';
import type { Page } from 'playwright-core';
import type { WeftClient } from '@weft/client';
import { publish, rejection, start, task, waitRun } from '../support/e2e-platform.js';
import { createKey, keyField, nav, revokeKey, signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs can take a while on a shared machine: the order service, a Python CODE node, the scheduler. */
const RUN_WAIT_MS = WAIT_MS;

/** The status shown at the top of a run's page. */
const runStatus = (page: Page) => page.locator('[data-testid="run-status"]');

/** Waits for the run page's status to read `status`. */
async function waitForRunStatus(page: Page, status: string): Promise<void> {
  await runStatus(page)
    .filter({ hasText: new RegExp(`^\\s*${status}\\s*$`) })
    .waitFor({ timeout: RUN_WAIT_MS });
}

/** Waits for the row of run `id` on /runs to show `status`. */
async function waitForRow(page: Page, id: string, status: string): Promise<void> {
  await page.locator(`tr[data-run-id="${id}"]`).filter({ hasText: status }).waitFor({ timeout: RUN_WAIT_MS });
}

/** Marks the page's document, so {@link assertNotReloaded} can tell that it was never reloaded. */
async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => ((globalThis as unknown as { __weftMark: boolean }).__weftMark = true));
}

async function assertNotReloaded(page: Page): Promise<void> {
  expect(await page.evaluate(() => (globalThis as unknown as { __weftMark?: boolean }).__weftMark === true)).toBe(true);
}

describe('runs pages in the browser', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let adminKey: string;
  let shopUrl: string;

  /** Starts the order flow (`workflowId`, default order-flow) for `orderId`; returns the run id. */
  const startOrder = (orderId: string, workflowId = 'order-flow') => start(admin, workflowId, { order_id: orderId }, { config: { shop_url: shopUrl } });

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-runs'));
    shopUrl = suite.e2e.shop.url;
    const definition = await readFile(join(ROOT, 'examples/order-flow.yaml'), 'utf8');
    await publish(admin, 'order-flow', definition);
    // The same flow without fetch_order's retries, so an order the shop does not know fails at once.
    const once = definition.replace(/retry: \{max_attempts: 3, backoff_seconds: 2\}/, 'retry: {max_attempts: 1}');
    expect(once).not.toBe(definition);
    await publish(admin, 'order-flow-once', once);
  });

  suite.test('shows both demo orders finish live: the small one ships, the large one after a signal sent from its page', async (tab) => {
    const list = tab.page;
    await signIn(list, adminKey, '/runs');
    await markDocument(list);
    const small = await startOrder('1001');
    const large = await startOrder('2001');

    // Both rows appear and the small order ends without a reload; the large one waits for approve-2001.
    await waitForRow(list, small, 'SUCCEEDED');
    await waitRun(admin, large, (r) => task(r, 'approval')?.status === 'WAITING', RUN_WAIT_MS);
    await list.locator(`tr[data-run-id="${large}"]`).waitFor();
    expect(await list.locator(`tr[data-run-id="${large}"]`).filter({ hasText: 'SUCCEEDED' }).count()).toBe(0);

    // Its page, in a second tab: send the signal and watch the run end there.
    const runPage = await tab.newPage();
    await signIn(runPage, adminKey, `/runs/${large}`);
    await runStatus(runPage).waitFor();
    await markDocument(runPage);
    await runPage.getByLabel('Signal name').fill('approve-2001');
    await runPage.getByLabel('Payload (JSON)').fill('{"approved_by":"browser"}');
    await runPage.getByRole('button', { name: 'Send signal' }).click();
    await waitForRunStatus(runPage, 'SUCCEEDED');
    await runPage.locator('[data-node-id="ship"][data-status="COMPLETED"]').waitFor({ timeout: RUN_WAIT_MS });
    await assertNotReloaded(runPage);

    // The list followed it too.
    await waitForRow(list, large, 'SUCCEEDED');
    await assertNotReloaded(list);
    const final = await waitRun(admin, large);
    expect(task(final, 'approval')).toMatchObject({ status: 'COMPLETED', output: { approved_by: 'browser' } });

    if (process.env.WEFT_CONSOLE_SCREENSHOT === '1') {
      await runPage.setViewportSize({ width: 1280, height: 900 });
      await runPage.screenshot({ path: join(ROOT, 'docs/console-run.png') });
    }
  });

  suite.test('retries a failed run from the node chosen on the graph, with a new input', async ({ page }) => {
    // The shop answers 404 for an id outside [A-Za-z0-9_-]; fetch_order has one attempt here.
    const failed = await startOrder('no.such', 'order-flow-once');
    const first = await waitRun(admin, failed, undefined, RUN_WAIT_MS);
    expect({ status: first.status, fetch: task(first, 'fetch_order').status }).toEqual({ status: 'FAILED', fetch: 'FAILED' });
    await signIn(page, adminKey, `/runs/${failed}`);
    await waitForRunStatus(page, 'FAILED');
    await markDocument(page);

    await page.locator('[data-node-id="fetch_order"]').click();
    expect(await page.getByLabel('Retry from node').inputValue()).toBe('fetch_order');
    await page.getByLabel('Input (JSON)').fill('{"order_id":"1001"}');
    await page.getByRole('button', { name: 'Retry run' }).click();

    await waitForRunStatus(page, 'SUCCEEDED');
    await page.locator('[data-node-id="ship"][data-status="COMPLETED"]').waitFor({ timeout: RUN_WAIT_MS });
    await assertNotReloaded(page);
    const final = await waitRun(admin, failed);
    expect(final.input).toEqual({ order_id: '1001' });
    expect(task(final, 'ship').output.shipped).toBe(true);
  });

  suite.test('offers a viewer no cancel, pause, retry or signal, where an operator has them', async ({ page }) => {
    const waiting = await startOrder('2002');
    await waitRun(admin, waiting, (r) => task(r, 'approval')?.status === 'WAITING', RUN_WAIT_MS);
    const actions = ['Cancel run', 'Pause run', 'Retry run', 'Send signal'];

    const operator = await createKey(admin, 'browser-operator', 'operator');
    await signIn(page, operator.secret, `/runs/${waiting}`);
    await runStatus(page).waitFor();
    for (const name of actions) await page.getByRole('button', { name }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    const viewer = await createKey(admin, 'browser-viewer', 'viewer');
    await signIn(page, viewer.secret, `/runs/${waiting}`);
    await runStatus(page).waitFor();
    await page.locator('[data-node-id="approval"]').waitFor();
    for (const name of actions) expect({ name, count: await page.getByRole('button', { name }).count() }).toEqual({ name, count: 0 });
    // No Actions panel, no empty column: the graph panel spans the row.
    const widths = await page.evaluate(() => {
      // Runs in the page: the suites are type-checked without the DOM's types.
      type Box = { getBoundingClientRect(): { width: number } };
      const doc = (globalThis as unknown as { document: { querySelector(selector: string): Box | null } }).document;
      return { row: doc.querySelector('.run-main')!.getBoundingClientRect().width, graph: doc.querySelector('.run-graph')!.getBoundingClientRect().width };
    });
    expect(Math.abs(widths.row - widths.graph)).toBeLessThan(2);

    await admin.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id } }`, { i: { runId: waiting } });
  });

  suite.test("shows the API's words when it refuses an action: a retry on a version that does not exist", async ({ page }) => {
    const done = await startOrder('1002');
    await waitRun(admin, done, undefined, RUN_WAIT_MS);
    const refused = await rejection(
      admin.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id } }`, { i: { runId: done, fromNodeId: 'fetch_order', version: 99 } }),
    );
    expect(refused.message).toBeTruthy();

    await signIn(page, adminKey, `/runs/${done}`);
    await waitForRunStatus(page, 'SUCCEEDED');
    await page.locator('[data-node-id="fetch_order"]').click();
    await page.getByLabel('Version').fill('99');
    await page.getByRole('button', { name: 'Retry run' }).click();
    const alert = page.getByRole('alert').filter({ hasText: refused.message });
    await alert.first().waitFor({ timeout: WAIT_MS });
    expect((await waitRun(admin, done)).status).toBe('SUCCEEDED');
  });

  suite.test('signs a live page out within seconds of its key being revoked', async ({ page }) => {
    const second = await createKey(admin, 'browser-revoked', 'operator');
    // /runs follows the tenant's runs over graphql-ws; the API re-checks a socket's key every
    // WEFT_WS_KEY_RECHECK_MS (200 ms under startE2E) and closes it with 4401 once revoked.
    const socket = page.waitForEvent('websocket', { timeout: WAIT_MS });
    await signIn(page, second.secret, '/runs');
    await markDocument(page);
    expect(new URL((await socket).url()).pathname).toBe('/graphql');
    await revokeKey(admin, second.id);
    await keyField(page).waitFor({ timeout: WAIT_MS });
    await page
      .getByRole('status')
      .filter({ hasText: /revoked|sign in again/i })
      .waitFor();
    expect(await nav(page).count()).toBe(0);
    await assertNotReloaded(page);
  });
});
