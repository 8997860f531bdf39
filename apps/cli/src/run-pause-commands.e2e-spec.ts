import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import YAML from 'yaml';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, startE2E, task, waitRun, type E2E } from '../../../test/support/e2e-platform.js';
import { cli, type CliResult } from '../../../test/support/weft-cli.js';

/** Run fields the suite polls: the pause and each task's wait. */
const FIELDS = 'id status pausedAt pauseReason tasks { nodeId status attempt waitReason waitDetail iteration }';

/**
 * `weft pause` and `weft resume` against a whole Weft (API, worker, scheduler) on the test
 * database: what they print for people, as JSON and as YAML, a repeated pause or resume, a
 * paused run in `runs --status PAUSED` and in `run-status`, a watch that follows a run through
 * its pause, a run paused by a node out of attempts, and the CONFLICT of a run that has ended.
 */
describe('weft pause and resume', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);
  const signal = (runId: string, name: string) =>
    client.request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId, name } });
  /** A run of `gated` waiting at its first node for the signal `go`. */
  async function waitingRun(): Promise<string> {
    const runId = await start(client, 'gated');
    await waitRun(client, runId, (r) => task(r, 'gate')?.status === 'WAITING');
    return runId;
  }

  /** Resolves once a `weft` command running in this process has written `text` to stdout. */
  async function printed(text: string): Promise<void> {
    for (let i = 0; i < 600; i++) {
      const write = process.stdout.write as unknown;
      if (jest.isMockFunction(write) && write.mock.calls.some((args) => String(args[0]).includes(text))) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`weft did not print ${JSON.stringify(text)}`);
  }

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('cli-pause'));
    // gate waits for `go`, after runs on a worker, shipped waits for `ship`: a run stays active after its resume.
    await publish(client, 'gated', {
      nodes: [
        { node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } },
        jsNode('after', 'return {done: true};'),
        { node_id: 'shipped', type: 'WAIT_FOR_EVENT', spec: { event: 'ship' } },
      ],
      edges: [
        { from: 'gate', to: 'after' },
        { from: 'after', to: 'shipped' },
      ],
    });
    // One run at a time: a second run waits QUEUED for the slot.
    await publish(client, 'single', {
      concurrency: { limit: 1 },
      nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }],
      edges: [],
    });
    await publish(client, 'declined', { nodes: [{ ...jsNode('charge', 'throw new Error("card declined");'), on_exhausted: 'pause' }], edges: [] });
  }, 120_000);
  afterAll(() => e2e.close());

  it('pauses a run waiting for a signal, lists and shows it PAUSED, and resumes it, in every output format', async () => {
    const runId = await waitingRun();

    const paused = await weft('pause', runId, '--reason', 'maintenance window');
    expect(paused).toEqual({ code: 0, stdout: `run ${runId} PAUSED (maintenance window)\n`, stderr: '' });
    const again = await weft('pause', runId, '--reason', 'another', '-o', 'json');
    expect(again).toMatchObject({ code: 0, stderr: '' });
    const json = JSON.parse(again.stdout);
    // A repeated pause changes nothing: the first reason and instant stay.
    expect(json).toEqual({
      id: runId,
      status: 'PAUSED',
      workflowId: 'gated',
      version: 1,
      pausedAt: expect.any(String),
      pauseReason: 'maintenance window',
      error: null,
      finishedAt: null,
    });
    expect(YAML.parse((await weft('pause', runId, '-o', 'yaml')).stdout)).toEqual(json);

    // The signal is delivered; the next node waits for the resume.
    expect((await signal(runId, 'go')).sendSignal.delivered).toBe(true);
    await waitRun(client, runId, (r) => task(r, 'after')?.status === 'QUEUED', 50_000, FIELDS);

    const listed = await weft('runs', '--status', 'paused');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+WORKFLOW\s+VERSION\s+STATUS\s+PRIORITY\s+CREATED\s+DURATION\s+WAITING$/);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${runId}\\s+gated\\s+1\\s+PAUSED\\s+3\\s+\\S+Z\\s+\\S+\\s+paused: maintenance window$`)),
    ]);
    const listedJson = JSON.parse((await weft('runs', '--status', 'PAUSED', '-o', 'json')).stdout);
    expect(listedJson).toEqual([expect.objectContaining({ id: runId, status: 'PAUSED', pauseReason: 'maintenance window', pausedAt: json.pausedAt })]);
    expect(JSON.parse((await weft('runs', '--status', 'RUNNING', '-o', 'json')).stdout).map((r: { id: string }) => r.id)).not.toContain(runId);

    const status = await weft('run-status', runId);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^run\\s+${runId}\\nworkflow\\s+gated version 1\\nstatus\\s+PAUSED\\n`));
    expect(status.stdout).toMatch(/\npaused\s+since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: maintenance window\n/);
    expect(status.stdout).toMatch(/\ngate\s+COMPLETED\s+-\s*\nafter\s+QUEUED\s+1 of 1\s+RUN_PAUSED: run paused: maintenance window\n/);
    const statusJson = JSON.parse((await weft('run-status', runId, '-o', 'json')).stdout);
    expect(statusJson).toMatchObject({ status: 'PAUSED', pauseReason: 'maintenance window', pausedAt: json.pausedAt });

    const resumed = await weft('resume', runId, '--reason', 'window over');
    expect(resumed).toEqual({ code: 0, stdout: `run ${runId} RUNNING\n`, stderr: '' });
    await waitRun(client, runId, (r) => task(r, 'shipped')?.status === 'WAITING', 50_000, FIELDS);
    // A repeated resume changes nothing and returns the run.
    const resumedJson = JSON.parse((await weft('resume', runId, '-o', 'json')).stdout);
    expect(resumedJson).toEqual({ ...json, status: 'RUNNING', pausedAt: null, pauseReason: null });

    const pausedYaml = YAML.parse((await weft('pause', runId, '--reason', 'second', '-o', 'yaml')).stdout);
    expect(pausedYaml).toMatchObject({ id: runId, status: 'PAUSED', pauseReason: 'second', pausedAt: expect.any(String) });
    expect(YAML.parse((await weft('resume', runId, '-o', 'yaml')).stdout)).toEqual(resumedJson);

    await signal(runId, 'ship');
    expect((await waitRun(client, runId)).status).toBe('SUCCEEDED');
  });

  it('watch follows a paused run until it ends: a line for the pause, one for the resume', async () => {
    const runId = await waitingRun();
    await client.request(`mutation { pauseRun(input: {runId: "${runId}", reason: "hold on"}) { id } }`);
    const watching = weft('watch', runId);
    await printed('run: PAUSED (hold on)\n');
    await client.request(`mutation { resumeRun(input: {runId: "${runId}"}) { id } }`);
    await printed('run: RUNNING\n');
    await signal(runId, 'go');
    await waitRun(client, runId, (r) => task(r, 'shipped')?.status === 'WAITING');
    await signal(runId, 'ship');
    const r = await watching;
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.slice(0, 3)).toEqual(['run: PAUSED (hold on)', 'gate: WAITING (waiting for signal "go")', 'run: RUNNING']);
    expect(lines).toContain('shipped: COMPLETED');
    expect(r.stdout).toMatch(/\n\{\n {2}"status": "SUCCEEDED",/);
  });

  it('shows the pause of a node out of attempts with its error, and resumes it for another attempt', async () => {
    const runId = await start(client, 'declined');
    await waitRun(client, runId, (r) => r.status === 'PAUSED', 50_000, FIELDS);
    const status = await weft('run-status', runId);
    expect(status.stdout).toMatch(/\nstatus\s+PAUSED\n/);
    expect(status.stdout).toMatch(/\npaused\s+since \S+Z: node charge exhausted its 1 attempt: .*card declined/);
    expect(status.stdout).toMatch(/\ncharge\s+FAILED\s+1 of 1\s+.*card declined/);
    expect((await weft('runs', '--status', 'PAUSED', '--workflow', 'declined')).stdout).toMatch(/PAUSED .*paused: node charge exhausted its 1 attempt: /);

    expect((await weft('resume', runId)).stdout).toBe(`run ${runId} RUNNING\n`);
    const again = await waitRun(client, runId, (r) => r.status === 'PAUSED' && task(r, 'charge')?.attempt === 1, 50_000, FIELDS);
    expect(again.pauseReason).toMatch(/^node charge exhausted its 2 attempts: /);
    expect((await weft('cancel', runId)).stdout).toBe(`run ${runId} CANCELLED\n`);
  });

  it('refuses to pause a run that has ended, or resume one: CONFLICT, exit code 4; pauses a QUEUED one; an unknown run: exit code 1', async () => {
    const runId = await waitingRun();
    await weft('cancel', runId);
    const pause = await weft('pause', runId, '--reason', 'late');
    expect(pause).toMatchObject({ code: 4, stdout: '' });
    expect(pause.stderr).toMatch(new RegExp(`^error: CONFLICT: run ${runId} is CANCELLED: only an active run can be paused`));
    const json = await weft('pause', runId, '-o', 'json');
    expect(json).toMatchObject({ code: 4, stdout: '' });
    expect(json.stderr).toMatch(/^error: CONFLICT: /);
    const resume = await weft('resume', runId);
    expect(resume).toMatchObject({ code: 4, stdout: '' });
    expect(resume.stderr).toMatch(/^error: CONFLICT: .*CANCELLED/);

    const holder = await start(client, 'single');
    const queued = await start(client, 'single');
    await waitRun(client, queued, (r) => r.status === 'QUEUED', 50_000, FIELDS);
    // A run waiting for its slot pauses too: it is not started while paused.
    const slot = await weft('pause', queued);
    expect(slot).toMatchObject({ code: 0, stdout: `run ${queued} PAUSED (paused)\n` });
    await weft('cancel', holder);
    await weft('cancel', queued);

    const unknown = await weft('pause', '00000000-0000-4000-8000-000000000000');
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toMatch(/^error: NOT_FOUND: /);
    expect(await weft('pause')).toMatchObject({ code: 2, stderr: "error: missing required argument 'runId'\n(run 'weft pause --help' for usage)\n" });
  });
});
