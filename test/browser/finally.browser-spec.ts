/**
 * A definition's finally step on the console's run page in a real Chromium: the DAG draws it with
 * its status and a link labelled finally from the sink node, and the task table lists its task
 * with the decided outcome it read.
 *
 * The selectors are the run page's contract: the DAG's `[data-node-id][data-status]` and
 * `.dag-edge[data-from][data-to]`, task rows `tr[data-task-node]`, `[data-testid="run-status"]`.
 */
import { beforeAll, describe, expect } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, task, waitRun } from '../support/e2e-platform.js';
import { signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

describe('the finally step in the browser', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let adminKey: string;

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-finally'));
    await publish(admin, 'with-finally', {
      nodes: [jsNode('work', 'return {n: 1};')],
      edges: [],
      finally: { ...jsNode('notify', 'return {saw: input.status};', { status: '{{ run.status }}' }) },
    });
  });

  suite.test("shows the finally step on the run's page: in the DAG with a finally link, and in the tasks", async ({ page }) => {
    const runId = await start(admin, 'with-finally');
    const run = await waitRun(admin, runId, undefined, WAIT_MS);
    expect(run.status).toBe('SUCCEEDED');
    expect(task(run, 'notify').output).toEqual({ saw: 'SUCCEEDED' });

    await signIn(page, adminKey, `/runs/${runId}`);
    await page.locator('[data-node-id="notify"][data-status="COMPLETED"]').waitFor({ timeout: WAIT_MS });
    await page.locator('.dag-edge[data-from="work"][data-to="notify"]').waitFor({ timeout: WAIT_MS });
    await page.locator('tr[data-task-node="notify"]').first().waitFor({ timeout: WAIT_MS });
    expect(await page.locator('[data-testid="run-status"]').innerText()).toMatch(/SUCCEEDED/);
  });
});
