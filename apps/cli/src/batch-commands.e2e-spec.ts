import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import YAML from 'yaml';
import type { WeftClient } from '@weft/client';
import { getRun, publish, start, startE2E, task, waitRun, type E2E } from '../../../test/support/e2e-platform.js';
import { cli, type CliResult } from '../../../test/support/weft-cli.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/**
 * `weft batch` against a whole Weft (API, worker, scheduler) on the test database, the scheduler
 * acting on one run of a batch a second so that a batch is seen running: pausing and resuming
 * labelled runs in bulk with `--yes --watch` (a run that has ended is SKIPPED with why), in every
 * output format; the refusals (no terminal and no `--yes`, `retry` without `--from-node`, no
 * filter); `list`, `describe` and `stop`.
 */
describe('weft batch', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);

  /** `n` runs of `gated` labelled `batch=<tag>`, each waiting at its first node for a signal. */
  async function waitingRuns(tag: string, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await start(client, 'gated', {}, { labels: { batch: tag } }));
    for (const id of ids) await waitRun(client, id, (r) => task(r, 'gate')?.status === 'WAITING');
    return ids;
  }

  /** Runs `fn` with stdin taken for no terminal, as under a script or CI. */
  async function withoutTerminal<T>(fn: () => Promise<T>): Promise<T> {
    const saved = process.stdin.isTTY;
    process.stdin.isTTY = false;
    try {
      return await fn();
    } finally {
      process.stdin.isTTY = saved;
    }
  }

  const batchCount = async () => (await client.request(`{ runBatches(first: 100) { edges { node { id } } } }`)).runBatches.edges.length;

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_BATCH_RUNS_PER_SECOND: 1 });
    ({ client, apiKey } = await e2e.tenant('cli-batch'));
    await publish(client, 'gated', { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }], edges: [] });
  }, 120_000);
  afterAll(() => e2e.close());

  it('pauses labelled runs in bulk, skips one that has ended with why, and resumes them', async () => {
    const runs = await waitingRuns('pause', 3);
    const ended = await start(client, 'gated', {}, { labels: { batch: 'pause' } });
    await weft('cancel', ended);

    const paused = await weft('batch', 'pause', '--label', 'batch=pause', '--reason', 'maintenance', '--yes', '--watch');
    expect(paused).toMatchObject({ code: 0, stderr: '' });
    const lines = paused.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('4 runs match the filter now');
    const id = new RegExp(`^batch (${UUID}) created: PAUSE of 4 runs$`).exec(lines[1]!)?.[1];
    expect(id).toBeDefined();
    // One line per change, counters only growing, until it is COMPLETED; then the run it skipped.
    const progress = lines.slice(2, -2);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (const line of progress) expect(line).toMatch(new RegExp(`^batch ${id} (RUNNING|COMPLETED): \\d applied, \\d skipped, 0 failed of 4$`));
    expect(progress.at(-1)).toBe(`batch ${id} COMPLETED: 3 applied, 1 skipped, 0 failed of 4`);
    expect(lines.slice(-2)).toEqual([
      'RUN                                   OUTCOME  ERROR',
      expect.stringMatching(new RegExp(`^${ended}  SKIPPED  .*CANCELLED`)),
    ]);
    for (const runId of runs) expect(await getRun(client, runId, 'status pauseReason')).toEqual({ status: 'PAUSED', pauseReason: 'maintenance' });

    const described = await weft('batch', 'describe', id!);
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(
      new RegExp(
        `^batch\\s+${id}\\naction\\s+PAUSE\\nstatus\\s+COMPLETED\\nruns\\s+4 \\(3 applied, 1 skipped, 0 failed, 0 pending\\)\\n` +
          'filter\\s+labels=\\{"batch":"pause"\\}\\nreason\\s+maintenance\\ncreated\\s+\\S+Z\\nfinished\\s+\\S+Z\\n\\n' +
          `RUN\\s+OUTCOME\\s+ERROR\\n${ended}\\s+SKIPPED\\s+.*CANCELLED.*\\n$`,
      ),
    );
    const json = JSON.parse((await weft('batch', 'describe', id!, '-o', 'json')).stdout);
    expect(json).toMatchObject({ id, action: 'PAUSE', status: 'COMPLETED', total: 4, applied: 3, skipped: 1, failed: 0, reason: 'maintenance' });
    expect(json.filter).toEqual({ labels: { batch: 'pause' } });
    expect(json.items).toEqual([
      ...runs.map((runId) => ({ runId, outcome: 'APPLIED', error: null })),
      { runId: ended, outcome: 'SKIPPED', error: expect.stringContaining('CANCELLED') },
    ]);
    expect(YAML.parse((await weft('batch', 'describe', id!, '-o', 'yaml')).stdout)).toEqual(json);

    // With -o json, stdout holds the finished batch and its items only; what it says goes to stderr.
    const resumed = await weft('batch', 'resume', '--label', 'batch=pause', '--status', 'PAUSED', '--yes', '--watch', '-o', 'json');
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(new RegExp(`^3 runs match the filter now\\nbatch ${UUID} created: RESUME of 3 runs\\n$`));
    const finished = JSON.parse(resumed.stdout);
    expect(finished).toMatchObject({ action: 'RESUME', status: 'COMPLETED', total: 3, applied: 3, skipped: 0, failed: 0 });
    expect(finished.items.map((i: { runId: string; outcome: string }) => [i.runId, i.outcome])).toEqual(runs.map((r) => [r, 'APPLIED']));
    for (const runId of runs) expect((await getRun(client, runId, 'status')).status).toBe('RUNNING');

    const listed = await weft('batch', 'list');
    expect(listed.code).toBe(0);
    const rows = listed.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^ID\s+ACTION\s+STATUS\s+TOTAL\s+APPLIED\s+SKIPPED\s+FAILED\s+CREATED$/);
    expect(rows[1]).toMatch(new RegExp(`^${finished.id}\\s+RESUME\\s+COMPLETED\\s+3\\s+3\\s+0\\s+0\\s+\\S+Z$`));
    expect(rows[2]).toMatch(new RegExp(`^${id}\\s+PAUSE\\s+COMPLETED\\s+4\\s+3\\s+1\\s+0\\s+\\S+Z$`));
    const listedJson = JSON.parse((await weft('batch', 'list', '--limit', '1', '-o', 'json')).stdout);
    expect(listedJson).toEqual([expect.objectContaining({ id: finished.id, action: 'RESUME', total: 3 })]);
  });

  it('refuses without a terminal and without --yes, retry without --from-node, and no filter, acting on nothing', async () => {
    const [runId] = await waitingRuns('refuse', 1);
    const before = await batchCount();

    const refused = await withoutTerminal(() => weft('batch', 'pause', '--label', 'batch=refuse'));
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('1 run matches the filter now\n');
    expect(refused.stderr).toBe(
      'error: pause 1 run: stdin is not a terminal, so there is no one to confirm; give --yes to act without asking\n' +
        "(run 'weft batch pause --help' for usage)\n",
    );
    const retry = await weft('batch', 'retry', '--label', 'batch=refuse', '--yes');
    expect(retry).toEqual({
      code: 2,
      stdout: '',
      stderr: "error: batch retry needs --from-node NODE: the node each run is retried from\n(run 'weft batch retry --help' for usage)\n",
    });
    const everything = await weft('batch', 'cancel', '--yes');
    expect(everything.code).toBe(2);
    expect(everything.stderr).toMatch(/^error: batch cancel needs at least one filter flag .*: it never acts on every run\n/);
    expect(await weft('batch', 'pause', '--from-node', 'gate', '--label', 'batch=refuse')).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown option '--from-node'/),
    });

    expect(await batchCount()).toBe(before);
    expect((await getRun(client, runId!, 'status')).status).toBe('RUNNING');
    const none = await weft('batch', 'cancel', '--label', 'batch=nothing-has-this', '--yes');
    expect(none).toEqual({ code: 0, stdout: 'no run matches the filter now\n', stderr: '' });
    expect(await batchCount()).toBe(before);
  });

  it('stops a running batch, leaving the runs it has not acted on; unknown ids are NOT_FOUND', async () => {
    const runs = await waitingRuns('stop', 3);
    const created = await weft('batch', 'cancel', '--label', 'batch=stop', '--reason', 'not needed', '--yes', '-o', 'json');
    expect(created.code).toBe(0);
    expect(created.stderr).toBe('3 runs match the filter now\n');
    const b = JSON.parse(created.stdout);
    expect(b).toMatchObject({ action: 'CANCEL', status: 'RUNNING', total: 3, reason: 'not needed', filter: { labels: { batch: 'stop' } } });

    const stopped = await weft('batch', 'stop', b.id);
    expect(stopped.code).toBe(0);
    const m = new RegExp(`^batch ${b.id} STOPPED: (\\d) applied, 0 skipped, 0 failed of 3\\n$`).exec(stopped.stdout);
    expect(m).not.toBeNull();
    const applied = Number(m![1]);
    // One run a second: the stop comes before the last run's turn.
    expect(applied).toBeLessThan(3);
    const described = await weft('batch', 'describe', b.id);
    expect(described.stdout).toMatch(/\nstatus\s+STOPPED\n/);
    expect(described.stdout).toMatch(new RegExp(`\\n${3 - applied} runs? PENDING: not acted on\\n$`));
    const statuses = await Promise.all(runs.map(async (r) => (await getRun(client, r, 'status')).status));
    expect(statuses.filter((s) => s === 'RUNNING')).toHaveLength(3 - applied);
    // Stopping a stopped batch returns it as it is.
    expect(JSON.parse((await weft('batch', 'stop', b.id, '-o', 'json')).stdout)).toMatchObject({ id: b.id, status: 'STOPPED', applied });

    const unknown = await weft('batch', 'describe', '00000000-0000-4000-8000-000000000000');
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toMatch(/^error: NOT_FOUND: /);
    expect((await weft('batch', 'stop', '00000000-0000-4000-8000-000000000000')).code).toBe(1);
  });
});
