/**
 * Flow control in the console, in a real Chromium: the Flow page (reached from the navigation)
 * lists the tenant's concurrency keys and rate limits; a QUEUED run's page says why it waits, and
 * so does a task waiting out a retry's backoff; the runs list filters on QUEUED. The QUEUED run
 * is the coordinator's (its concurrency key is full); the rate-limited starts are rows the
 * database owner writes, the way fair dispatch writes them.
 */
import { beforeAll, describe, expect } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, task, waitRun } from '../support/e2e-platform.js';
import { nav, signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

describe('flow control in the browser', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let adminKey: string;
  let queuedRun: string;
  let flakyRun: string;

  beforeAll(async () => {
    let tenantId: string;
    ({ client: admin, apiKey: adminKey, tenantId } = await suite.e2e.tenant('browser-flow'));
    const owner = (text: string, params: unknown[]) => suite.e2e.owner.query(text, params);
    await publish(admin, 'gated', {
      nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: 600 } }],
      edges: [],
      concurrency: { key: '{{ input.customer }}', limit: 2 },
    });
    const ids = [await start(admin, 'gated', { customer: 'acme' }), await start(admin, 'gated', { customer: 'acme' })];
    const runs = await Promise.all(ids.map((id) => waitRun(admin, id, (r) => task(r, 'gate')?.status === 'WAITING')));
    // The group is full: the coordinator queues the third run.
    queuedRun = await start(admin, 'gated', { customer: 'acme' });
    await waitRun(admin, queuedRun, (r) => r.status === 'QUEUED');
    const gateTask = task(runs[0], 'gate').id;
    await owner(`UPDATE tasks SET flow_rate_key = 'partner', flow_rate_limit = 20, flow_rate_per_seconds = 60 WHERE id = $1`, [gateTask]);
    for (const ago of ['1 second', '10 seconds']) {
      await owner(`INSERT INTO flow_rate_starts (tenant_id, rate_key, started_at, task_id, attempt) VALUES ($1, 'partner', now() - $2::interval, $3, 0)`, [
        tenantId,
        ago,
        gateTask,
      ]);
    }
    await publish(admin, 'flaky', {
      nodes: [{ ...jsNode('boom', 'throw new Error("not yet");'), retry: { max_attempts: 3, backoff_seconds: 600 } }],
      edges: [],
    });
    flakyRun = await start(admin, 'flaky');
    await waitRun(admin, flakyRun, (r) => task(r, 'boom')?.status === 'QUEUED' && task(r, 'boom')?.attempt === 1);
  });

  suite.test('lists concurrency keys and rate limits on the Flow page', async ({ page }) => {
    await signIn(page, adminKey);
    await nav(page).getByRole('link', { name: 'Flow', exact: true }).click();
    await page.waitForURL(/\/flow$/);
    const acme = page.locator('[data-testid="concurrency-keys"] tr[data-key="acme"]');
    await acme.waitFor({ timeout: WAIT_MS });
    expect((await acme.locator('th, td').allTextContents()).map((t) => t.trim())).toEqual(['acme', 'workflow', 'gated', '2', '2: full', '1']);
    const partner = page.locator('[data-testid="rate-limits"] tr[data-key="partner"]');
    await partner.waitFor({ timeout: WAIT_MS });
    expect((await partner.locator('th, td').allTextContents()).map((t) => t.trim())).toEqual(['partner', '20', '60 s', '2', '0', '—']);
    // Keys of another workflow only: none.
    await page.getByLabel('Workflow').fill('flaky');
    await page.getByText('No concurrency keys').waitFor({ timeout: WAIT_MS });
  });

  suite.test('says why a QUEUED run waits on its page, and why a task waits out its backoff', async ({ page }) => {
    await signIn(page, adminKey, `/runs/${queuedRun}`);
    const wait = page.locator('[data-testid="run-wait"]');
    await wait.waitFor({ timeout: WAIT_MS });
    expect((await wait.textContent())?.trim()).toBe('Waiting (concurrency limit): concurrency limit 2 reached for key "acme" (2 active, 1 queued)');
    await page.getByText('Concurrency key').waitFor();

    await page.goto(`/runs/${flakyRun}`);
    const row = page.locator('tr[data-task-node="boom"] .task-wait');
    await row.waitFor({ timeout: WAIT_MS });
    expect(await row.textContent()).toMatch(/^\s*retry backoff until \d{4}-\d\d-\d\dT/);
  });

  suite.test('filters the runs list on QUEUED', async ({ page }) => {
    await signIn(page, adminKey, '/runs');
    await page.getByLabel('Status').selectOption('QUEUED');
    await page.waitForURL(/status=QUEUED/);
    // The filtered page shows the QUEUED run, and the RUNNING one is not on it.
    await page.locator(`a[href="/runs/${queuedRun}"]`).first().waitFor({ timeout: WAIT_MS });
    await page.locator(`a[href="/runs/${flakyRun}"]`).first().waitFor({ state: 'detached', timeout: WAIT_MS });
    expect(await page.locator(`a[href="/runs/${queuedRun}"]`).count()).toBeGreaterThan(0);
  });
});
