/**
 * Bulk actions and labels in a real Chromium: a bulk PAUSE over a label filter from /runs (the
 * count first, the confirmation, the batch's page polling to COMPLETED with each run's outcome, a
 * run already finished SKIPPED with why), the runs then PAUSED; the refusal of a bulk action
 * without a filter; a label filter in the runs list and the labels of a run's page.
 *
 * The selectors are the pages' contract: on /runs `tr[data-run-id]` with `li[data-label-key]`,
 * the field "Labels", the buttons "Bulk action…", "Apply", the form's "Action", "Reason (optional)"
 * and `[data-testid="bulk-count"]`; on /runs/batches/<id> `[data-testid="batch-status"]`,
 * `[data-testid="batch-progress"]` (data-applied, data-skipped, data-failed, data-total) and rows
 * `tr[data-batch-run-id][data-outcome]`.
 */
import { beforeAll, describe, expect } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { getRun, jsNode, publish, start, task, waitRun } from '../support/e2e-platform.js';
import { nav, signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

describe('bulk actions and labels in the browser', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let adminKey: string;

  /** Starts a `gated` run with `labels` and waits for its gate to wait for the signal `go`. */
  const startGated = async (labels: Record<string, string>) => {
    const runId = await start(admin, 'gated', {}, { labels });
    await waitRun(admin, runId, (r) => task(r, 'gate')?.status === 'WAITING', WAIT_MS);
    return runId;
  };
  const cancelRun = (runId: string) => admin.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id } }`, { i: { runId } });

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-batches'));
    await publish(admin, 'gated', {
      nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }, jsNode('after', 'return {done: true};')],
      edges: [{ from: 'gate', to: 'after' }],
    });
    await publish(admin, 'quick', { nodes: [jsNode('only', 'return {ok: true};')], edges: [] });
  });

  suite.test('pauses the runs of a label filter in bulk: count, confirmation, progress to COMPLETED and each run’s outcome', async ({ page }) => {
    const labels = { team: 'ops', wave: 'w1' };
    const active = [await startGated(labels), await startGated(labels), await startGated(labels)];
    const finished = await start(admin, 'quick', {}, { labels });
    await waitRun(admin, finished, undefined, WAIT_MS);
    const outside = await startGated({ team: 'ops', wave: 'w2' });

    await signIn(page, adminKey, '/runs?label=wave%3Dw1&label=team%3Dops');
    for (const id of [...active, finished]) await page.locator(`tr[data-run-id="${id}"]`).waitFor();
    expect(await page.locator('tr[data-run-id]').count()).toBe(4);
    expect(await page.getByLabel('Labels', { exact: true }).inputValue()).toBe('wave=w1\nteam=ops');

    await page.getByRole('button', { name: 'Bulk action…' }).click();
    const count = page.locator('[data-testid="bulk-count"]');
    await count.waitFor();
    expect({ count: await count.getAttribute('data-count'), text: (await count.textContent())?.trim() }).toEqual({
      count: '4',
      text: '4 runs match the filter now.',
    });
    expect(await page.getByRole('combobox', { name: /^Action/ }).inputValue()).toBe('PAUSE');
    await page.getByLabel('Reason (optional)').fill('bulk maintenance');
    await page.getByRole('button', { name: 'Pause 4 runs' }).click();

    await page.waitForURL(/\/runs\/batches\/[0-9a-f-]+$/);
    const batchId = new URL(page.url()).pathname.split('/').at(-1)!;
    await page.locator('[data-testid="batch-status"][data-status="COMPLETED"]').first().waitFor({ timeout: WAIT_MS });
    const progress = page.locator('[data-testid="batch-progress"]');
    expect({
      applied: await progress.getAttribute('data-applied'),
      skipped: await progress.getAttribute('data-skipped'),
      failed: await progress.getAttribute('data-failed'),
      total: await progress.getAttribute('data-total'),
    }).toEqual({ applied: '3', skipped: '1', failed: '0', total: '4' });
    expect((await progress.textContent())?.trim()).toMatch(/^4 of 4 runs done: 3 applied, 1 skipped, 0 failed, 0 pending\. Finished /);
    expect(await page.getByRole('button', { name: 'Stop' }).count()).toBe(0);

    const outcomes = Object.fromEntries(
      await page
        .locator('tr[data-batch-run-id]')
        .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-batch-run-id'), r.getAttribute('data-outcome')] as [string, string])),
    );
    expect(outcomes).toEqual({ [active[0]!]: 'APPLIED', [active[1]!]: 'APPLIED', [active[2]!]: 'APPLIED', [finished]: 'SKIPPED' });
    const skippedWhy = (await page.locator(`tr[data-batch-run-id="${finished}"] td`).nth(2).textContent())?.trim() ?? '';
    const api = await admin.request(`query($id: ID!) { runBatch(id: $id) { items(first: 10) { edges { node { runId outcome error } } } } }`, { id: batchId });
    const skippedItem = api.runBatch.items.edges
      .map((e: { node: { runId: string; error: string | null } }) => e.node)
      .find((n: { runId: string }) => n.runId === finished);
    expect(skippedItem.error).toEqual(expect.any(String));
    expect(skippedWhy).toBe(skippedItem.error);

    for (const id of active) {
      const run = await getRun(admin, id, 'id status pauseReason');
      expect({ id, status: run.status, reason: run.pauseReason }).toEqual({ id, status: 'PAUSED', reason: 'bulk maintenance' });
    }
    expect((await getRun(admin, finished, 'status')).status).toBe('SUCCEEDED');
    expect((await getRun(admin, outside, 'status')).status).toBe('RUNNING');

    // The run ids link to the runs; the batch is listed among the tenant's bulk actions.
    await page.locator(`tr[data-batch-run-id="${active[0]}"] a`).click();
    await page.waitForURL(new RegExp(`/runs/${active[0]}$`));
    await page.locator('[data-testid="run-status"][data-status="PAUSED"]').waitFor();
    await page.goto('/runs/batches');
    await nav(page).waitFor();
    const row = page.locator(`tr[data-batch-id="${batchId}"]`);
    await row.waitFor();
    expect((await row.locator('td').allTextContents()).slice(1)).toEqual(['Pause', 'COMPLETED', '4 of 4 runs done: 3 applied, 1 skipped, 0 failed, 0 pending']);

    await Promise.all([...active, outside].map(cancelRun));
  });

  suite.test('refuses a bulk action without a filter, and says why', async ({ page }) => {
    await signIn(page, adminKey, '/runs');
    const button = page.getByRole('button', { name: 'Bulk action…' });
    await button.waitFor();
    expect(await button.isDisabled()).toBe(true);
    const why = page.locator('#bulk-refusal');
    expect((await why.textContent())?.trim()).toBe(
      'A bulk action acts on the runs the filter matches; set a filter first (an empty filter would match every run).',
    );
    expect(await button.getAttribute('aria-describedby')).toBe('bulk-refusal');
    expect(await page.locator('[data-testid="bulk-count"]').count()).toBe(0);

    await page.getByLabel('Status').selectOption('FAILED');
    await page.waitForURL(/status=FAILED/);
    // The page renders the filter after the address changed: wait for the button to follow it.
    await page.locator('button:not([disabled])', { hasText: 'Bulk action…' }).waitFor({ timeout: WAIT_MS });
    expect(await button.isDisabled()).toBe(false);
    await why.waitFor({ state: 'detached', timeout: WAIT_MS });
  });

  suite.test('filters the runs list by a label typed into the form, keeps it in the URL, and shows a run’s labels', async ({ page }) => {
    const blue = await startGated({ team: 'blue', env: 'prod' });
    const red = await startGated({ team: 'red' });
    await signIn(page, adminKey, '/runs');
    await page.locator(`tr[data-run-id="${red}"]`).waitFor();
    expect(await page.locator(`tr[data-run-id="${blue}"] li[data-label-key]`).allTextContents()).toEqual(['env=prod', 'team=blue']);

    await page.getByLabel('Labels', { exact: true }).fill('team=blue');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/[?&]label=team%3Dblue/);
    await page.locator(`tr[data-run-id="${red}"]`).waitFor({ state: 'detached' });
    expect(await page.locator('tr[data-run-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')))).toEqual([blue]);

    await page.reload();
    await page.locator(`tr[data-run-id="${blue}"]`).waitFor();
    expect(await page.getByLabel('Labels', { exact: true }).inputValue()).toBe('team=blue');

    await page.locator(`tr[data-run-id="${blue}"] a.run-id`).click();
    await page.locator('[data-testid="run-labels"] li[data-label-key]').first().waitFor();
    expect(await page.locator('[data-testid="run-labels"] li').allTextContents()).toEqual(['env=prod', 'team=blue']);

    await Promise.all([cancelRun(blue), cancelRun(red)]);
  });
});

describe('stopping a bulk action in the browser', () => {
  // One run a second: the batch is still RUNNING when its page opens.
  const suite = browserSuite({ env: { WEFT_BATCH_RUNS_PER_SECOND: 1 } });
  let admin: WeftClient;
  let adminKey: string;

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-batch-stop'));
    await publish(admin, 'gated', { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }], edges: [] });
  });

  suite.test('shows a RUNNING batch’s progress with Stop, and leaves the runs not reached when stopped', async ({ page }) => {
    const runs: string[] = [];
    for (let i = 0; i < 8; i++) runs.push(await start(admin, 'gated', {}, { labels: { wave: 'slow' } }));
    for (const id of runs) await waitRun(admin, id, (r) => task(r, 'gate')?.status === 'WAITING', WAIT_MS);

    await signIn(page, adminKey, '/runs?label=wave%3Dslow');
    await page.getByRole('button', { name: 'Bulk action…' }).click();
    await page.locator('[data-testid="bulk-count"][data-count="8"]').waitFor();
    await page.getByRole('combobox', { name: /^Action/ }).selectOption('CANCEL');
    await page.getByRole('button', { name: 'Cancel 8 runs' }).click();
    await page.waitForURL(/\/runs\/batches\/[0-9a-f-]+$/);
    const batchId = new URL(page.url()).pathname.split('/').at(-1)!;

    await page.locator('[data-testid="batch-status"][data-status="RUNNING"]').waitFor();
    const stop = page.getByRole('button', { name: 'Stop' });
    await stop.click();
    await page.locator('[data-testid="batch-status"][data-status="STOPPED"]').waitFor();
    await stop.waitFor({ state: 'detached' });

    const api = (
      await admin.request(
        `query($id: ID!) { runBatch(id: $id) { status total applied skipped failed items(first: 10) { edges { node { runId outcome } } } } }`,
        {
          id: batchId,
        },
      )
    ).runBatch;
    expect({ status: api.status, total: api.total, skipped: api.skipped, failed: api.failed }).toEqual({ status: 'STOPPED', total: 8, skipped: 0, failed: 0 });
    expect(api.applied).toBeLessThan(8);
    const progress = page.locator('[data-testid="batch-progress"]');
    expect(await progress.getAttribute('data-applied')).toBe(String(api.applied));
    const shown = Object.fromEntries(
      await page
        .locator('tr[data-batch-run-id]')
        .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-batch-run-id'), r.getAttribute('data-outcome')] as [string, string])),
    );
    const outcomes = Object.fromEntries(api.items.edges.map((e: { node: { runId: string; outcome: string } }) => [e.node.runId, e.node.outcome]));
    expect(shown).toEqual(outcomes);
    for (const id of runs) {
      const status = (await getRun(admin, id, 'status')).status;
      expect({ id, outcome: outcomes[id], status }).toEqual({ id, outcome: outcomes[id], status: outcomes[id] === 'APPLIED' ? 'CANCELLED' : 'RUNNING' });
    }
    await Promise.all(
      runs
        .filter((id) => outcomes[id] === 'PENDING')
        .map((runId) => admin.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id } }`, { i: { runId } })),
    );
  });
});
