/**
 * The webhooks page in a real Chromium: an admin creates a webhook to a receiver on 127.0.0.1 (its
 * secret shown once), reads its delivery once a run failed, and deletes it; an operator is told the
 * page needs an admin key and is offered no link to it.
 *
 * The selectors are the page's contract: the nav link "Webhooks", the field "URL", the event
 * checkboxes (`run.failed`…), the buttons "Create webhook", "Done", "Deliveries", "Delete",
 * "Confirm delete", `[data-testid="webhook-secret"]`, rows `tr[data-webhook-id]` and
 * `tr[data-delivery-id][data-status][data-attempts]`.
 */
import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, waitRun } from '../support/e2e-platform.js';
import { createKey, nav, signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

describe('webhooks in the browser', () => {
  const suite = browserSuite({ env: { WEFT_WEBHOOK_BACKOFF_MS: 20 } });
  let admin: WeftClient;
  let adminKey: string;
  let server: Server;
  let url: string;
  const received: string[] = [];

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-webhooks'));
    await publish(admin, 'fails', { nodes: [jsNode('boom', 'throw new Error("boom");')], edges: [] });
    server = createServer((req, res) => {
      received.push(String(req.headers['weft-delivery']));
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => {
    server?.close();
  });

  suite.test('creates a webhook with its secret shown once, lists its delivery, and deletes it', async ({ page }) => {
    await signIn(page, adminKey, '/runs');
    await nav(page).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('URL').fill(url);
    expect(await page.getByLabel('run.failed').isChecked()).toBe(true);
    await page.getByLabel('run.timed_out').check();
    await page.getByRole('button', { name: 'Create webhook' }).click();

    const secret = page.locator('[data-testid="webhook-secret"]');
    await secret.waitFor();
    expect(await secret.inputValue()).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const [hook] = (await admin.request(`{ webhooks { id url events secret } }`)).webhooks;
    expect(hook).toEqual({ id: expect.any(String), url, events: ['RUN_FAILED', 'RUN_TIMED_OUT'], secret: null });
    await page.getByRole('button', { name: 'Done' }).click();
    await secret.waitFor({ state: 'detached' });
    const row = page.locator(`tr[data-webhook-id="${hook.id}"]`);
    expect(await row.locator('td').first().textContent()).toBe(url);

    const run = await start(admin, 'fails');
    await waitRun(admin, run, undefined, WAIT_MS);
    for (const until = Date.now() + WAIT_MS; received.length === 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 50));
    await row.getByRole('button', { name: 'Deliveries' }).click();
    const delivery = page.locator(`tr[data-delivery-id="${received[0]}"][data-status="DELIVERED"][data-attempts="1"]`);
    await delivery.waitFor({ timeout: WAIT_MS });
    expect(await delivery.locator('td').first().textContent()).toBe('run.failed');
    expect(await delivery.locator('td').nth(1).textContent()).toBe(run);

    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Confirm delete' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await admin.request(`{ webhooks { id } }`)).webhooks).toEqual([]);
  });

  suite.test('tells an operator that webhooks need an admin key, and offers no Webhooks link', async ({ page }) => {
    const operator = await createKey(admin, 'browser-webhooks-operator', 'operator');
    await signIn(page, operator.secret, '/runs');
    expect(await nav(page).getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    await page.evaluate(() => {
      const w = globalThis as unknown as { history: { pushState(s: unknown, t: string, u: string): void }; dispatchEvent(e: unknown): void };
      w.history.pushState({}, '', '/webhooks');
      w.dispatchEvent(new (globalThis as unknown as { PopStateEvent: new (type: string) => unknown }).PopStateEvent('popstate'));
    });
    await page.getByText('Managing webhooks needs an admin key; this console is signed in with a operator key.').waitFor();
  });
});
