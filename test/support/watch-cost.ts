/**
 * What one update of a watched run costs the API process. A whole Weft runs in this process (as
 * the e2e suites start it) and runs R + 1 chains of 20 HTTP tasks to their end; each run in turn
 * is then followed by one `runUpdated` subscription with the CLI's watch selection
 * (WATCH_RUN), executed as graphql-ws executes it (graphql-js `subscribe` on the API's schema,
 * each result formatted and serialized as a `next` message), while U run changes are published
 * on the run-update channel (Redis) one at a time, each waiting for its payload. Each change
 * claims a task or completes it with an output, so every update is patched from the change,
 * without reading the run. The first run takes W changes as a warm-up; the process CPU (user +
 * system) of the other runs' changes is printed per update. A measurement, not a test (nothing
 * is asserted); needs the local PostgreSQL and Redis:
 *
 *   node --import ./test/support/ts-register.mjs test/support/watch-cost.ts [U=60] [R=10] [W=300]
 *
 * With WATCH_COST_PROFILE=<file.cpuprofile>, a CPU profile of the measured runs is written there.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Redis } from 'ioredis';
import { parse, subscribe, type ExecutionResult } from 'graphql';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import type { RunChange, RunUpdate } from '@weft/engine';
import { RUN_UPDATED_CHANNEL, loadConfig } from '@weft/platform';
import { RunUpdatesService } from '@weft/api';
import { AuthService } from '../../apps/api/src/auth/auth.service.js';
import { formatExecutionResult } from '../../apps/api/src/common/error-formatter.js';
import { withoutRefusedData } from '../../apps/api/src/common/response-limit.plugin.js';
import { RUN_PAGE } from '../../apps/cli/src/client/run-pages.js';
import { WATCH_RUN } from '../../apps/cli/src/client/run-watch.js';
import { getRun, publish, start, startE2E, waitRun } from './e2e-platform.js';
import { stubServer } from './faults.js';

const [U = 60, R = 10, W = 300] = process.argv.slice(2).map(Number);
const TASKS = 20;

const e2e = await startE2E({ WEFT_LOG_LEVEL: 'error' });
const stub = await stubServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url, ok: true })));
const { client, tenantId, apiKey } = await e2e.tenant('watch-cost');
const redis = new Redis(loadConfig({}, {}).redisUrl);
const service = e2e.app.get(RunUpdatesService);
const schema = e2e.app.get(GraphQLSchemaHost).schema;
const authorization = `Bearer ${apiKey}`;
const principal = await e2e.app.get(AuthService).authenticate(authorization);
const document = parse(WATCH_RUN);
const at = Date.parse('2030-01-01T00:00:00Z');

/** The k-th change after seq `seq`: task k/2 (cycling) claimed (k even), then completed with an output. */
function change(k: number, seq: number, tasks: readonly { id: string; nodeId: string }[]): RunChange {
  const t = tasks[Math.floor(k / 2) % tasks.length]!;
  const attempt = Math.floor(k / (2 * tasks.length));
  const done = k % 2 === 1;
  const output = { path: `/${t.nodeId}`, k };
  return {
    seq,
    at: new Date(at + seq).toISOString(),
    run: k === 0 ? { status: 'RUNNING', finishedAt: null, output: null } : {},
    tasks: [
      done
        ? { op: 'set', id: t.id, touch: true, status: 'COMPLETED', output, finished: true }
        : { op: 'set', id: t.id, touch: true, status: 'RUNNING', attempt },
    ],
    event: done
      ? { type: 'NodeCompleted', nodeId: t.nodeId, attempt, payload: { output }, actions: [], ignored: null, error: null }
      : { type: 'TaskClaimed', nodeId: t.nodeId, attempt, payload: {}, actions: [], ignored: null, error: null },
  };
}

/** Follows `runId` with WATCH_RUN, sends it `n` changes one at a time; returns the CPU (µs) and wall time (ms) of the changes, the payload bytes. */
async function follow(runId: string, n: number): Promise<{ cpu: number; wall: number; bytes: number }> {
  const run = await getRun(client, runId, 'seq tasks(first: 100) { id nodeId }');
  const contextValue = { principal, authorization, authenticatedAt: Date.now() };
  const it = (await subscribe({ schema, document, variableValues: { id: runId, page: RUN_PAGE }, contextValue })) as
    AsyncIterator<ExecutionResult> | ExecutionResult;
  if (!('next' in it)) throw new Error(`subscribe failed: ${JSON.stringify(it)}`);
  let received = 0;
  let bytes = 0;
  let wake: (() => void) | undefined;
  const reading = (async () => {
    for (let r = await it.next(); !r.done; r = await it.next()) {
      // What graphql-ws does with each result (onNext, then the `next` message).
      const message = JSON.stringify({ id: '1', type: 'next', payload: formatExecutionResult(withoutRefusedData(r.value)) });
      if (r.value.errors) throw new Error(message);
      bytes += message.length;
      received++;
      wake?.();
    }
  })();
  const until = async (count: number) => {
    while (received < count) await new Promise<void>((r) => (wake = r));
  };
  await until(1);
  // The watch's announcement comes back and the run is read once more: let that read land first.
  const loads = service.stats.runLoads;
  for (const end = Date.now() + 5_000; service.stats.runLoads < loads + 1 && Date.now() < end;) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 100));
  bytes = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < n; k++) {
    const c = change(k, run.seq + 1 + k, run.tasks);
    const update = { tenantId, runId, status: 'RUNNING', seq: c.seq, change: c } as RunUpdate;
    await redis.publish(RUN_UPDATED_CHANNEL, JSON.stringify([update]));
    await until(k + 2);
  }
  const cpu = process.cpuUsage(cpu0);
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  await it.return?.();
  await reading;
  return { cpu: cpu.user + cpu.system, wall, bytes };
}

try {
  const ids = Array.from({ length: TASKS }, (_, i) => `n${i}`);
  await publish(client, 'cost', {
    nodes: ids.map((id) => ({ node_id: id, type: 'HTTP', spec: { url: `${stub.base}/${id}` } })),
    edges: ids.slice(1).map((to, i) => ({ from: ids[i]!, to })),
  });
  const runs = await Promise.all(Array.from({ length: R + 1 }, (_, i) => start(client, 'cost', { order: i })));
  for (const id of runs) await waitRun(client, id, undefined, 120_000);
  await follow(runs[0]!, W); // warm-up
  // The platform's own background (the scheduler's polls, the workers' waits), µs of CPU per ms.
  const idle0 = process.cpuUsage();
  const idleT0 = process.hrtime.bigint();
  await new Promise((r) => setTimeout(r, 3_000));
  const idleCpu = process.cpuUsage(idle0);
  const background = (idleCpu.user + idleCpu.system) / (Number(process.hrtime.bigint() - idleT0) / 1e6);
  const loads0 = service.stats.runLoads;
  let cpu = 0;
  let wall = 0;
  let bytes = 0;
  const profile = process.env.WATCH_COST_PROFILE;
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  for (const id of runs.slice(1)) {
    const r = await follow(id, U);
    cpu += r.cpu;
    wall += r.wall;
    bytes += r.bytes;
  }
  if (session) {
    writeFileSync(profile!, JSON.stringify((await session.post('Profiler.stop')).profile));
    session.disconnect();
  }
  const n = U * R;
  // Each run is read when it is first watched and when its watch's announcement comes back.
  const reads = service.stats.runLoads - loads0 - 2 * R;
  console.log(
    `watch-cost: ${R} runs of ${TASKS} tasks x ${U} updates, one subscriber each (WATCH_FIELDS): ` +
      `CPU ${(cpu / 1000 / n).toFixed(3)} ms/update (${((cpu - background * wall) / 1000 / n).toFixed(3)} without the idle platform's ${(background / 10).toFixed(1)}%), wall ${(wall / n).toFixed(3)} ms/update, ${(bytes / n).toFixed(0)} B/payload, ${reads} reads besides the first two of each run`,
  );
} finally {
  redis.disconnect();
  await stub.close();
  await e2e.close();
}
