/**
 * A SWITCH's decision on the run page in a real Chromium: a SWITCH whose conditions all failed
 * says "no branch taken" with each condition and its value, one that fell back on its default
 * says `default taken: <id>`.
 *
 * The selectors are the run page's contract: task rows `tr[data-task-node]` with
 * `.task-decision[data-decision]` (`none` or `default`).
 */
import { beforeAll, describe, expect } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { publish, start, waitRun } from '../support/e2e-platform.js';
import { signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

describe('a SWITCH decision in the browser', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let adminKey: string;

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-decision'));
    const wait = (id: string) => ({ node_id: id, type: 'WAIT', spec: { duration_seconds: 0 } });
    const edges = [{ from: 's', to: 'big', condition: '{{input.n > 10}}' }];
    await publish(admin, 'no-default', { nodes: [{ node_id: 's', type: 'SWITCH' }, wait('big')], edges });
    await publish(admin, 'with-default', {
      nodes: [{ node_id: 's', type: 'SWITCH', spec: { default: 'other' } }, wait('big'), wait('other')],
      edges: [...edges, { from: 's', to: 'other' }],
    });
  });

  suite.test('shows "no branch taken" with the conditions, and the default taken', async ({ page }) => {
    const none = await start(admin, 'no-default', { n: 1 });
    await waitRun(admin, none, undefined, WAIT_MS);
    await signIn(page, adminKey, `/runs/${none}`);
    const decided = page.locator('tr[data-task-node="s"] .task-decision[data-decision="none"]');
    await decided.waitFor({ timeout: WAIT_MS });
    const text = (await decided.textContent()) ?? '';
    expect(text).toContain('no branch taken');
    expect(text).toContain('big: {{input.n > 10}} = false');

    const fallen = await start(admin, 'with-default', { n: 1 });
    await waitRun(admin, fallen, undefined, WAIT_MS);
    await page.goto(page.url().replace(none, fallen));
    const dflt = page.locator('tr[data-task-node="s"] .task-decision[data-decision="default"]');
    await dflt.waitFor({ timeout: WAIT_MS });
    expect((await dflt.textContent())?.trim()).toBe('default taken: other');
  });
});
