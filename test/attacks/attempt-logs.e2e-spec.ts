import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { AttemptLogRepository } from '@weft/persistence';
import { jsNode, publish, rejection, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';
import { cli } from '../support/weft-cli.js';

/**
 * Attempt logs under hostile CODE: bytes PostgreSQL's `text` cannot hold (NUL) or that are not
 * UTF-8, terminal escapes, one 10 MiB line without a newline, output that never stops, and a
 * process that outlives the runner and keeps printing. Each run ends, and what is stored is
 * valid text of at most 64 KiB of output after its marker.
 */
describe('attempt logs under hostile CODE', () => {
  let e2e: E2E;
  let client: WeftClient;

  const ATTEMPTS = `id status tasks { nodeId status attempt error attempts { attempt logs error } }`;
  /** The logs text of the worker's attempts, as stored (owner connection, no row-level security). */
  const stored = async (runId: string): Promise<string[]> =>
    (await e2e.owner.query(`SELECT logs FROM task_attempt_logs WHERE run_id = $1 ORDER BY attempt`, [runId])).map((r: { logs: string }) => r.logs);
  /** A log of at most 64 KiB of output plus the marker line (`… N bytes cut …\n`). */
  const capped = (logs: string) => {
    const [first] = logs.split('\n');
    const marker = /^… [\d,]+ bytes cut …$/.test(first!) ? Buffer.byteLength(`${first}\n`) : 0;
    return Buffer.byteLength(logs) - marker <= 64 * 1024;
  };
  const runOf = async (id: string, body: string, extra: Record<string, unknown> = {}, node: Record<string, unknown> = {}) => {
    await publish(client, id, { nodes: [{ ...jsNode(id, body, extra), ...node }], edges: [] });
    const runId = await start(client, id);
    return { runId, run: await waitRun(client, runId, undefined, 60_000, ATTEMPTS) };
  };

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client } = await e2e.tenant('hostile-logs'));
  });
  afterAll(async () => {
    await e2e.close();
  });

  it('stores NUL bytes, invalid UTF-8 and terminal escapes as valid text, and the run succeeds', async () => {
    const { runId, run } = await runOf(
      'binary',
      'process.stdout.write(Buffer.from([0x61, 0x00, 0x62, 0xff, 0xfe, 0x0a])); process.stdout.write("\\u001b[2J\\u001b]0;owned\\u0007red\\n"); return 1;',
    );
    expect(run.status).toBe('SUCCEEDED');
    const [logs] = await stored(runId);
    expect(logs).toBe('a\ufffdb\ufffd\ufffd\n\u001b[2J\u001b]0;owned\u0007red\n');
    expect(run.tasks[0].attempts[0].logs).toBe(logs);
  });

  it('keeps the tail of one 10 MiB line without a newline', async () => {
    const { runId, run } = await runOf('wide', 'process.stdout.write("x".repeat(10 * 1024 * 1024 - 1) + "END"); return 1;');
    expect(run.status).toBe('SUCCEEDED');
    const [logs] = await stored(runId);
    expect(logs!.split('\n')[0]).toBe(`… ${(10 * 1024 * 1024 + 2 - 64 * 1024).toLocaleString('en-US')} bytes cut …`);
    expect(logs!.endsWith('xxEND')).toBe(true);
    expect(capped(logs!)).toBe(true);
  });

  it('ends code that prints until its timeout, keeping the tail of what it printed', async () => {
    const { runId, run } = await runOf('forever', 'for (let i = 0; ; i++) console.log("spam " + i);', { timeout_seconds: 2 });
    expect(run.status).toBe('FAILED');
    expect(run.tasks[0].error).toMatch(/timed out/);
    const [logs] = await stored(runId);
    expect(logs).toMatch(/^… [\d,]+ bytes cut …\n/);
    expect(logs).toMatch(/spam \d+\n$/);
    expect(capped(logs!)).toBe(true);
  });

  it('ends the attempt when a process it started outlives it and keeps printing', async () => {
    const body =
      'const cp = require("node:child_process");' +
      ' cp.spawn("sh", ["-c", "while :; do echo orphan; done"], { detached: true, stdio: ["ignore", "inherit", "inherit"] }).unref();' +
      ' console.log("handler done"); return 1;';
    const { runId, run } = await runOf('orphan', body, { timeout_seconds: 10 });
    expect(run.status).toBe('SUCCEEDED');
    const [logs] = await stored(runId);
    // What the orphan printed until the attempt stopped reading may have cut the handler's line.
    expect(logs).toContain('orphan\n');
    expect(capped(logs!)).toBe(true);
  });
});

/**
 * The logs of many attempts in one answer: their sizes are charged to WEFT_MAX_RESPONSE_BYTES
 * (here 200,000) before any text is read, so an answer asking for more is refused as a whole,
 * and one within it has every text.
 */
describe('attempt logs and the response budget', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_MAX_RESPONSE_BYTES: 200_000 });
    ({ client, apiKey } = await e2e.tenant('budget-logs'));
  });
  afterAll(async () => {
    await e2e.close();
  });

  it('refuses an answer whose logs pass the budget, and answers one within it', async () => {
    // Four nodes in a row printing 64 KiB each (2-byte characters): 262,144 bytes of logs, over 200,000.
    const body = 'process.stdout.write("\u00e9".repeat(32 * 1024)); return 1;';
    await publish(client, 'wide4', {
      nodes: ['a', 'b', 'c', 'd'].map((id) => jsNode(id, body)),
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
        { from: 'c', to: 'd' },
      ],
    });
    const runId = await start(client, 'wide4');
    await waitRun(client, runId, undefined, 60_000, 'id status');
    const all = await rejection(client.request(`query($id: ID!) { run(id: $id) { tasks { nodeId attempts { logs } } } }`, { id: runId }));
    expect(all.code).toBe('BAD_USER_INPUT');
    expect(all.message).toMatch(/response too large/);
    const one = await client.request(`query($id: ID!) { run(id: $id) { tasks(first: 1) { nodeId attempts { attempt logs error } } } }`, { id: runId });
    expect(one.run.tasks).toEqual([{ nodeId: expect.any(String), attempts: [{ attempt: 0, logs: '\u00e9'.repeat(32 * 1024), error: null }] }]);
    // Sizes as stored: UTF-8 bytes, not characters.
    const [row] = await new AttemptLogRepository(e2e.owner).sizesOfTasks(
      (await e2e.owner.query(`SELECT tenant_id FROM runs WHERE id = $1`, [runId]))[0].tenant_id,
      (await e2e.owner.query(`SELECT id FROM tasks WHERE run_id = $1 AND node_id = 'a'`, [runId])).map((t: { id: string }) => t.id),
    );
    expect(row).toMatchObject({ attempt: 0, bytes: 64 * 1024 });

    // weft logs reads such a run in pages small enough for the budget.
    const r = await cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, 'logs', runId);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(
      r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(0, 10)),
    ).toEqual(['[a #1] ééé', '[b #1] ééé', '[c #1] ééé', '[d #1] ééé']);
  });
});
