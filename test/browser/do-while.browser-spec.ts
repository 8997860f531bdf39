/**
 * A DO_WHILE loop on the console's run page in a real Chromium, after a run that went round
 * four times: the DAG draws the loop as a box holding its body's nodes (each with the iteration
 * its status is from), and the task table lists the body tasks of the last three iterations under
 * the loop's own task, one head row per iteration, and the first on asking; the retry form offers the loop, not its body's nodes.
 * The API's Mermaid picture of the same run draws the body as a subgraph. A loop that runs out of
 * iterations is drawn FAILED at `iteration 2 of 2` with its outgoing edge skipped, and a version's
 * page draws the box with its bound only.
 *
 * The selectors are the run page's contract: the DAG's `[data-node-id][data-status]` (a body
 * node's `data-loop` and `data-loop-iteration`), `.dag-loop`, `.dag-edge[data-from][data-to]`,
 * task rows `tr[data-task-node][data-loop-iteration]` and `tr.loop-iteration[data-loop]`.
 */
import { beforeAll, describe, expect } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { getRun, jsNode, publish, start, waitRun } from '../support/e2e-platform.js';
import { signIn } from './support/console.js';
import { browserSuite, WAIT_MS } from './support/harness.js';

const FIELDS = 'id status error output tasks { nodeId nodeType status loopIteration } mermaid';

describe('a DO_WHILE loop in the browser', () => {
  const suite = browserSuite();
  let admin: WeftClient;
  let adminKey: string;

  beforeAll(async () => {
    ({ client: admin, apiKey: adminKey } = await suite.e2e.tenant('browser-do-while'));
    // check counts the iterations (n = iteration + 1); the loop goes on while n < 4: four rounds.
    await publish(admin, 'polling', {
      nodes: [
        jsNode('start', 'return {ok: true};'),
        {
          node_id: 'poll',
          type: 'DO_WHILE',
          spec: {
            body: {
              nodes: [
                jsNode('check', 'return {n: input.i + 1};', { i: '{{ tasks.poll.iteration }}' }),
                jsNode('tally', 'return {seen: input.n};', { n: '{{ tasks.check.output.n }}' }),
              ],
              edges: [{ from: 'check', to: 'tally' }],
            },
            condition: '{{ tasks.check.output.n < 4 }}',
            max_iterations: 5,
            output: '{{ tasks.check.output }}',
          },
        },
        jsNode('report', 'return {last: input.last};', { last: '{{ tasks.poll.output }}' }),
      ],
      edges: [
        { from: 'start', to: 'poll' },
        { from: 'poll', to: 'report' },
      ],
    });
    // A loop whose condition never turns false: it fails after its second round, report is skipped.
    await publish(admin, 'endless', {
      nodes: [
        {
          node_id: 'spin',
          type: 'DO_WHILE',
          spec: { body: { nodes: [jsNode('turn', 'return {again: true};')], edges: [] }, condition: '{{ tasks.turn.output.again }}', max_iterations: 2 },
        },
        jsNode('after', 'return {};'),
      ],
      edges: [{ from: 'spin', to: 'after' }],
    });
  });

  suite.test("boxes the body in the DAG and groups the body's tasks by iteration", async ({ page }) => {
    const runId = await start(admin, 'polling');
    const run = await waitRun(admin, runId, undefined, WAIT_MS, FIELDS);
    expect([run.status, run.error]).toEqual(['SUCCEEDED', null]);
    const looped = (run.tasks as { nodeId: string; loopIteration: number | null }[]).filter((t) => t.loopIteration !== null);
    expect(looped.filter((t) => t.nodeId === 'check').map((t) => t.loopIteration)).toEqual([0, 1, 2, 3]);

    // The API's picture: the body inside a subgraph, each body node from its latest iteration.
    const mermaid = ((await getRun(admin, runId, 'mermaid')) as { mermaid: string }).mermaid.split('\n');
    expect(mermaid).toContain('  subgraph n1["poll<br/>do while · iteration 4 of 5<br/>COMPLETED"]');
    expect(mermaid).toContain('    n2["check<br/>CODE<br/>COMPLETED · iteration 4"]:::completed');
    expect(mermaid).toContain('  n1 ==> n4');

    await signIn(page, adminKey, `/runs/${runId}`);
    const loop = page.locator('.dag-loop[data-node-id="poll"][data-status="COMPLETED"]');
    await loop.waitFor({ timeout: WAIT_MS });
    expect(await loop.getAttribute('aria-label')).toBe('poll, DO_WHILE, do while · max 5, COMPLETED, iteration 4 of 5');
    const check = page.locator('[data-node-id="check"][data-loop="poll"][data-loop-iteration="3"][data-status="COMPLETED"]');
    await check.waitFor({ timeout: WAIT_MS });
    // The body's nodes sit inside the loop's box, below its header; the outer nodes outside it.
    const box = (await loop.locator('.dag-box').boundingBox())!;
    for (const id of ['check', 'tally']) {
      const b = (await page.locator(`[data-node-id="${id}"] .dag-box`).boundingBox())!;
      expect(b.x >= box.x && b.x + b.width <= box.x + box.width && b.y > box.y && b.y + b.height <= box.y + box.height).toBe(true);
    }
    const report = (await page.locator('[data-node-id="report"] .dag-box').boundingBox())!;
    expect(report.y).toBeGreaterThan(box.y + box.height);
    // Edges: attached, not visible (a straight vertical edge has no width, which Playwright calls hidden).
    await page.locator('.dag-edge[data-from="start"][data-to="poll"][data-state="TAKEN"]').waitFor({ state: 'attached', timeout: WAIT_MS });
    await page.locator('.dag-edge[data-from="check"][data-to="tally"][data-state="TAKEN"]').waitFor({ state: 'attached', timeout: WAIT_MS });

    // The task table: the loop's row, then per iteration a head row and its body tasks (the last
    // three; a button stands in for the earlier ones), then report.
    const rows = page.locator('.task-table tbody tr');
    await page.locator('tr.loop-iteration[data-loop="poll"]').nth(2).waitFor({ timeout: WAIT_MS });
    const order = () =>
      rows.evaluateAll((trs) =>
        trs.map((tr) =>
          tr.classList.contains('loop-earlier')
            ? '…'
            : tr.classList.contains('loop-iteration')
              ? `# ${tr.getAttribute('data-loop-iteration')}`
              : `${tr.getAttribute('data-task-node')}${tr.hasAttribute('data-loop-iteration') ? `@${tr.getAttribute('data-loop-iteration')}` : ''}`,
        ),
      );
    const recent = ['# 1', 'check@1', 'tally@1', '# 2', 'check@2', 'tally@2', '# 3', 'check@3', 'tally@3', 'report'];
    expect(await order()).toEqual(['start', 'poll@3', '…', ...recent]);
    await page.getByRole('button', { name: 'Show 1 earlier iteration of poll' }).click();
    await page.locator('tr.loop-iteration[data-loop-iteration="0"]').waitFor({ timeout: WAIT_MS });
    expect(await order()).toEqual(['start', 'poll@3', '# 0', 'check@0', 'tally@0', ...recent]);
    expect(await page.locator('tr[data-task-node="poll"] th').innerText()).toContain('iteration 4 of 5');
    expect(await page.locator('tr[data-task-node="check"][data-loop-iteration="1"] th').innerText()).toContain('iteration 2');
    expect(await page.locator('tr.loop-iteration[data-loop-iteration="1"]').innerText()).toContain('poll · iteration 2 (2 tasks)');
    // Each iteration's check has its own logs panel, named with its iteration.
    expect(await page.locator('details[data-task-logs="check"][data-loop-iteration="1"] summary').innerText()).toContain('check, iteration 2');

    // The history says which iteration each body report was for.
    const reports = await page.locator('li[data-event-type="NodeCompleted"] .event-line').allInnerTexts();
    expect(reports.filter((r) => r.includes('node check')).map((r) => /iteration \d/.exec(r)?.[0])).toEqual([
      'iteration 1',
      'iteration 2',
      'iteration 3',
      'iteration 4',
    ]);

    // A body node chosen on the graph is no node to retry from: the form names its loop instead.
    await check.click();
    await page.getByText('check is in the body of the loop poll: retry from poll').waitFor({ timeout: WAIT_MS });
    expect(await page.locator('.run-actions select option').allInnerTexts()).not.toContain('check');
  });

  suite.test("shows a loop that ran out of iterations failed, and a version's loop with its bound only", async ({ page }) => {
    const runId = await start(admin, 'endless');
    const run = await waitRun(admin, runId, undefined, WAIT_MS, FIELDS);
    expect([run.status, run.error]).toEqual(['FAILED', 'node spin failed: DO_WHILE spin reached max_iterations 2 with its condition still true']);

    await signIn(page, adminKey, `/runs/${runId}`);
    const loop = page.locator('.dag-loop[data-node-id="spin"][data-status="FAILED"]');
    await loop.waitFor({ timeout: WAIT_MS });
    expect(await loop.getAttribute('aria-label')).toBe('spin, DO_WHILE, do while · max 2, FAILED, iteration 2 of 2');
    await page.locator('[data-node-id="turn"][data-loop="spin"][data-loop-iteration="1"][data-status="COMPLETED"]').waitFor({ timeout: WAIT_MS });
    await page.locator('.dag-edge[data-from="spin"][data-to="after"][data-state="SKIPPED"]').waitFor({ state: 'attached', timeout: WAIT_MS });
    expect(await page.locator('tr[data-task-node="spin"] th').innerText()).toContain('iteration 2 of 2');

    // The version's graph: the same box, its bound, no status nor iteration.
    await page.goto('/workflows/endless?version=1');
    const plan = page.locator('.dag-loop[data-node-id="spin"][data-status="UNREACHED"]');
    await plan.waitFor({ timeout: WAIT_MS });
    expect(await plan.getAttribute('aria-label')).toBe('spin, DO_WHILE, do while · max 2');
    expect(await page.locator('[data-node-id="turn"]').getAttribute('aria-label')).toBe('turn, CODE, in loop spin');
  });
});
