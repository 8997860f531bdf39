/**
 * "Retry failed iterations" on a run's page in a real Chromium: a `for_each` node whose
 * iterations partly failed offers it once the node is chosen, names the iterations, and runs
 * only those again (the order service counts the requests per key).
 */
import { beforeAll, describe, expect } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { iterations, publish, start, task, waitRun } from '../support/e2e-platform.js';
import { signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

describe('retrying the failed iterations of a for_each node from the console', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let adminKey: string;

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-for-each-retry'));
    // Each element's key fails its first `f` requests (503), then answers; one attempt per iteration.
    await publish(admin, 'checks', {
      nodes: [
        {
          node_id: 'check',
          type: 'HTTP',
          for_each: '{{input.items}}',
          spec: { url: '{{config.shop}}/flaky/{{item.k}}?fail={{item.f}}', method: 'GET' },
        },
      ],
      edges: [],
    });
  });

  suite.test('offers the action on the node, names the iterations, and runs only those again', async ({ page }) => {
    const tag = `${Date.now()}`;
    const keys = ['a', 'b', 'c'].map((k) => `${k}-${tag}`);
    const items = [
      { k: keys[0], f: 0 },
      { k: keys[1], f: 1 },
      { k: keys[2], f: 1 },
    ];
    const id = await start(admin, 'checks', { items }, { config: { shop: suite.e2e.shop.url } });
    const first = await waitRun(admin, id, undefined, WAIT_MS);
    expect(first.status).toBe('FAILED');
    expect(iterations(first, 'check').map((t: { status: string }) => t.status)).toEqual(['COMPLETED', 'FAILED', 'FAILED']);

    await signIn(page, adminKey, `/runs/${id}`);
    await page
      .locator('[data-testid="run-status"]')
      .filter({ hasText: /^\s*FAILED\s*$/ })
      .waitFor({ timeout: WAIT_MS });
    expect(await page.getByRole('button', { name: 'Retry failed iterations' }).count()).toBe(0);
    await page.locator('[data-node-id="check"]').first().click();
    const action = page.getByRole('button', { name: 'Retry failed iterations' });
    await action.waitFor({ timeout: WAIT_MS });
    await page.getByText('runs again only iterations 1, 2 of').waitFor({ timeout: WAIT_MS });
    await action.click();
    await page.getByRole('status').filter({ hasText: 'Retry of 2 failed iterations of check started.' }).waitFor({ timeout: WAIT_MS });
    await page
      .locator('[data-testid="run-status"]')
      .filter({ hasText: /^\s*SUCCEEDED\s*$/ })
      .waitFor({ timeout: WAIT_MS });

    const final = await waitRun(admin, id, undefined, WAIT_MS);
    expect(iterations(final, 'check').map((t: { status: string; attempt: number }) => [t.status, t.attempt])).toEqual([
      ['COMPLETED', 0],
      ['COMPLETED', 1],
      ['COMPLETED', 1],
    ]);
    expect(task(final, 'check').status).toBe('COMPLETED');
    // The completed element was not asked for again.
    expect(keys.map((k) => suite.e2e.shop.calls.get(k))).toEqual([1, 2, 2]);
  });
});
