import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, startE2E, waitRun, type E2E } from '../../../test/support/e2e-platform.js';
import { cli, type CliResult } from '../../../test/support/weft-cli.js';

/**
 * What the run-reading commands print of a DO_WHILE loop against a whole Weft: a loop that went
 * round three times, its body's tasks named by iteration (counted from 1) in `run-status`,
 * `watch` and `logs`, the loop's iteration on its row, and its body as a Mermaid subgraph.
 */
describe('weft run-status, watch and logs of a DO_WHILE loop', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  let runId: string;
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);
  /** Lines with runs of spaces squeezed, as a table's columns are padded. */
  const squeezed = (text: string) => text.split('\n').map((l) => l.replace(/\s+/g, ' ').trim());

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('cli-do-while'));
    // check counts the iterations (n = iteration + 1) and says so in its logs; the loop goes on while n < 3.
    await publish(client, 'polling', {
      nodes: [
        {
          node_id: 'poll',
          type: 'DO_WHILE',
          spec: {
            body: {
              nodes: [
                jsNode('check', 'console.log(`round ${input.i}`); return {n: input.i + 1};', { i: '{{ tasks.poll.iteration }}' }),
                { node_id: 'pause', type: 'WAIT', spec: { duration_seconds: 0 } },
              ],
              edges: [{ from: 'check', to: 'pause' }],
            },
            condition: '{{ tasks.check.output.n < 3 }}',
            max_iterations: 5,
          },
        },
        jsNode('report', 'return {ok: true};'),
      ],
      edges: [{ from: 'poll', to: 'report' }],
    });
    runId = await start(client, 'polling');
    const run = await waitRun(client, runId);
    expect(run.status).toBe('SUCCEEDED');
  });

  afterAll(() => e2e.close());

  it("lists each iteration's body tasks in run-status, the loop's row saying its last iteration", async () => {
    const status = await weft('run-status', runId);
    expect(status.code).toBe(0);
    const lines = squeezed(status.stdout);
    const rows = lines.slice(lines.findIndex((l) => l.startsWith('NODE')) + 1).filter(Boolean);
    expect(rows.map((r) => r.replace(/ COMPLETED .*$/, ''))).toEqual([
      'poll',
      'check (iteration 1)',
      'pause (iteration 1)',
      'check (iteration 2)',
      'pause (iteration 2)',
      'check (iteration 3)',
      'pause (iteration 3)',
      'report',
    ]);
    expect(rows[0]).toBe('poll COMPLETED - iteration 3');
    // JSON keeps the API's 0-based iteration.
    const json = JSON.parse((await weft('run-status', runId, '-o', 'json')).stdout) as { tasks: { nodeId: string; loopIteration: number | null }[] };
    expect(json.tasks.filter((t) => t.nodeId === 'check').map((t) => t.loopIteration)).toEqual([0, 1, 2]);
  });

  it("draws the body as a subgraph with --mermaid, and names a body task's logs and watch lines by iteration", async () => {
    const mermaid = (await weft('run-status', runId, '--mermaid')).stdout.split('\n');
    expect(mermaid).toContain('  subgraph n0["poll<br/>do while · iteration 3 of 5<br/>COMPLETED"]');
    expect(mermaid).toContain('    n1["check<br/>CODE<br/>COMPLETED · iteration 3"]:::completed');

    const logs = await weft('logs', runId, '--node', 'check');
    expect(logs.stdout).toBe('[check (iteration 1) #1] round 0\n[check (iteration 2) #1] round 1\n[check (iteration 3) #1] round 2\n');

    const watch = await weft('watch', runId);
    expect(watch.stdout).toContain('poll: COMPLETED (iteration 3)\n');
    expect(watch.stdout).toContain('check (iteration 2): COMPLETED\n');
  });
});
