import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hostname } from 'node:os';
import YAML from 'yaml';
import { jobId, type TaskJob } from '@weft/engine';
import { RunRepository, TenantRepository } from '@weft/persistence';
import { BullTaskQueues, queuePrefix, WEFT_VERSION } from '@weft/platform';
import { WeftClient } from '@weft/client';
import { queueCommands, serverCommands, startPlatform, type RunningPlatform } from '@weft/cli';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { eventually, stubServer } from '../support/faults.js';
import { runCommands } from '../support/cli.js';
import { publish, rejection, start, testConfig, waitRun } from '../support/e2e-platform.js';

/**
 * Queues and workers through the real API, the real CLI and a real worker: an operator reserves
 * queues for tenant A with `weft admin queue`; tenant B may not publish a definition naming them,
 * and its tasks that reach them anyway (a definition published before the reservation, a forged
 * job) are never executed; each tenant's `queues` counts its own tasks only and shows nothing of
 * a queue reserved for another; `workers` lists the live workers, never with their host and pid
 * (not even to an admin key: those are the operator's, in `weft admin workers`).
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The platform's worker serves the built-in queues plus two that get reserved for A. */
const QUEUES = 'http,python,js,gpu,gpu-late';

describe('queues, workers and reservations', () => {
  let db: TestDatabase;
  let platform: RunningPlatform;
  let stub: Awaited<ReturnType<typeof stubServer>>;
  let forger: BullTaskQueues;
  let a: WeftClient;
  let aViewer: WeftClient;
  let b: WeftClient;
  let A: string;
  let B: string;
  let aKey: string;
  let bKey: string;
  const runs = () => new RunRepository(db.ds);

  /** `weft <args>` with the server side (admin) and the queue commands, on the test database. */
  const admin = (...args: string[]) =>
    runCommands(
      (p) => {
        serverCommands(p);
        queueCommands(p);
      },
      { DATABASE_URL: db.url, DATABASE_OWNER_URL: db.ownerUrl },
      ...args,
    );
  /** `weft <args>` on the client side, as the tenant holding `key`. */
  const weft = (key: string, ...args: string[]) => runCommands(queueCommands, { WEFT_URL: platform.url!, WEFT_API_KEY: key }, ...args);

  const node = (id: string, path: string, queue?: string) => ({ node_id: id, type: 'HTTP', spec: { url: `${stub.base}${path}` }, ...(queue ? { queue } : {}) });

  beforeAll(async () => {
    db = await createTestDatabase();
    stub = await stubServer();
    platform = await startPlatform(testConfig(db, { WEFT_QUEUES: QUEUES, WEFT_WORKER_CONCURRENCY: 4, WEFT_DRAIN_SECONDS: 2 }), {
      api: true,
      worker: true,
      scheduler: true,
      host: '127.0.0.1',
    });
    forger = new BullTaskQueues(REDIS_URL, queuePrefix(db.url));
    const tenants = new TenantRepository(db.ds);
    const ta = await tenants.createTenant('acme');
    const tb = await tenants.createTenant('bolt');
    A = ta.tenantId;
    B = tb.tenantId;
    aKey = ta.apiKey;
    bKey = tb.apiKey;
    a = new WeftClient(platform.url!, ta.apiKey);
    b = new WeftClient(platform.url!, tb.apiKey);
    aViewer = new WeftClient(platform.url!, (await tenants.createApiKey(A, { name: 'watcher', role: 'viewer' })).apiKey);
    // B publishes onto gpu-late before anyone reserves it.
    await publish(b, 'b-late', { nodes: [{ ...node('late', '/b-late', 'gpu-late'), retry: { max_attempts: 3, backoff_seconds: 1 } }], edges: [] });
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled([a?.close(), b?.close(), aViewer?.close()]);
    await platform?.close();
    await forger?.close();
    await stub?.close();
    await db?.drop();
  });

  it('lets the operator reserve queues for a tenant, list and release them, and refuses what cannot be reserved', async () => {
    expect(await admin('admin', 'queue', 'reserve', 'GPU', '--tenant', A)).toBe(`reserved queue "gpu" for tenant ${A}\nqueue "gpu" is reserved for: ${A}\n`);
    expect(await admin('admin', 'queue', 'reserve', 'gpu', '--tenant', A)).toBe(
      `queue "gpu" was already reserved for tenant ${A}\nqueue "gpu" is reserved for: ${A}\n`,
    );
    expect(await admin('admin', 'queue', 'reserve', 'gpu-late', '--tenant', A)).toContain(`queue "gpu-late" is reserved for: ${A}\n`);
    expect(await admin('admin', 'queue', 'reserve', 'spare', '--tenant', A, '--tenant', B)).toBe(
      `reserved queue "spare" for tenant ${A}\nreserved queue "spare" for tenant ${B}\nqueue "spare" is reserved for: ${A}, ${B}\n`,
    );

    const listed = JSON.parse(await admin('admin', 'queue', 'list', '-o', 'json')) as { queue: string; tenantId: string; tenantName: string }[];
    expect(listed.map(({ queue, tenantId, tenantName }) => [queue, tenantId, tenantName])).toEqual([
      ['gpu', A, 'acme'],
      ['gpu-late', A, 'acme'],
      ['spare', A, 'acme'],
      ['spare', B, 'bolt'],
    ]);
    const tableOut = (await admin('admin', 'queue', 'list')).split('\n');
    expect(tableOut[0]).toMatch(/^QUEUE\s+TENANT\s+NAME\s+RESERVED$/);
    expect(tableOut[1]).toMatch(new RegExp(`^gpu\\s+${A}\\s+acme\\s+\\d{4}-`));

    expect(await admin('admin', 'queue', 'release', 'spare', '--tenant', B)).toBe(
      `released queue "spare" for tenant ${B}\nqueue "spare" is still reserved for: ${A}\n`,
    );
    expect(await admin('admin', 'queue', 'release', 'spare')).toBe(
      `released queue "spare" for tenant ${A}\nqueue "spare" is shared: every tenant may use it\n`,
    );
    expect(await admin('admin', 'queue', 'release', 'spare')).toBe(`queue "spare" is not reserved\nqueue "spare" is shared: every tenant may use it\n`);
    expect(JSON.parse(await admin('admin', 'queue', 'reserve', 'spare', '--tenant', B, '-o', 'json'))).toEqual({
      queue: 'spare',
      reserved: [B],
      reservedFor: [B],
    });
    expect(YAML.parse(await admin('admin', 'queue', 'release', 'spare', '-o', 'yaml'))).toEqual({ queue: 'spare', released: [B], reservedFor: [] });

    await expect(admin('admin', 'queue', 'reserve', 'http', '--tenant', A)).rejects.toThrow(
      /queue "http" is where HTTP nodes go by default and cannot be reserved/,
    );
    await expect(admin('admin', 'queue', 'reserve', 'x', '--tenant', '019ae0b4-0000-7000-8000-000000000000')).rejects.toThrow(
      /unknown tenant 019ae0b4-0000-7000-8000-000000000000: .*nothing was reserved/,
    );
    await expect(admin('admin', 'queue', 'reserve', 'x', '--tenant', 'acme')).rejects.toThrow(/"acme" is not a tenant id/);
    await expect(admin('admin', 'queue', 'reserve', 'bad queue', '--tenant', A)).rejects.toThrow(
      /a queue name is 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit/,
    );
    await expect(admin('admin', 'queue', 'reserve', 'x')).rejects.toThrow(/--tenant/);
  });

  it("refuses B's definition naming A's queue at publish, naming the node and the queue; A publishes it", async () => {
    const definition = { nodes: [node('prep', '/prep'), node('train', '/train', 'GPU')], edges: [{ from: 'prep', to: 'train' }] };
    const err = await rejection(publish(b, 'b-gpu', definition));
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.errors[0]?.message).toBe('invalid workflow definition: node train uses queue "gpu", reserved for other tenants');
    expect(err.errors[0]?.extensions?.problems).toEqual([
      { nodeId: 'train', path: 'nodes[1].queue', message: 'queue "gpu" is reserved for other tenants: this tenant may not use it' },
    ]);
    await expect(b.request(`{ workflows { id } }`)).resolves.toEqual({ workflows: [{ id: 'b-late' }] });
    expect(await publish(a, 'a-gpu', definition)).toBe(1);
  });

  it("never executes B's task that reached a reserved queue: a version published before the reservation fails at once, for good", async () => {
    const runId = await start(b, 'b-late');
    const run = await waitRun(b, runId, undefined, 20_000);
    expect(run.status).toBe('FAILED');
    const t = run.tasks[0];
    expect([t.nodeId, t.status, t.attempt]).toEqual(['late', 'FAILED', 0]); // not retried, although max_attempts is 3
    expect(t.error).toBe(
      'queue "gpu-late" is reserved for other tenants: this tenant\'s tasks may not run on it; route node late to another queue, or ask the operator to reserve "gpu-late" for this tenant too',
    );
    expect(stub.count('/b-late')).toBe(0);
    // A's task on the same queue runs.
    await publish(a, 'a-late', { nodes: [node('late', '/a-late', 'gpu-late')], edges: [] });
    expect((await waitRun(a, await start(a, 'a-late'))).status).toBe('SUCCEEDED');
    expect(stub.count('/a-late')).toBe(1);
  });

  it("never executes a forged job putting B's task on A's queue", async () => {
    // B's task waits on a queue no worker serves; a job naming it is put on A's gpu queue.
    await publish(b, 'b-parked', { nodes: [node('parked', '/b-parked', 'b-parked')], edges: [] });
    const runId = await start(b, 'b-parked');
    const [task] = await eventually('the task is dispatched', async () => {
      const tasks = await runs().tasksOfRun(B, runId);
      return tasks.length === 1 && tasks[0]!.status === 'PENDING' ? tasks : undefined;
    });
    const forged: TaskJob = {
      tenantId: B,
      runId,
      taskId: task!.id,
      nodeId: 'parked',
      nodeType: 'HTTP',
      attempt: 0,
      queue: 'gpu',
      input: { url: `${stub.base}/b-parked` },
      notBefore: 0,
    };
    await forger.enqueue([forged]);
    await eventually('the worker took the forged job off the queue', async () => (await forger.queue('gpu').getJob(jobId(task!.id, 0))) === null, 30_000);
    expect(stub.count('/b-parked')).toBe(0);
    expect((await runs().tasksOfRun(B, runId)).map((t) => [t.status, t.leaseToken])).toEqual([['PENDING', null]]);
  });

  it("counts each tenant's own tasks only, and shows B nothing of A's reserved queues", async () => {
    // A: two tasks waiting on a queue no worker serves; one running on gpu (held by the stub).
    await publish(a, 'a-parked', { nodes: [node('parked', '/a-parked', 'a-parked')], edges: [] });
    await start(a, 'a-parked');
    await start(a, 'a-parked');
    const held: (() => void)[] = [];
    await stub.close();
    stub = await stubServer((_req, res) => held.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}')));
    await publish(a, 'a-hold', { nodes: [node('hold', '/hold', 'gpu')], edges: [] });
    const holding = await start(a, 'a-hold');
    await eventually('the gpu task runs', async () => held.length === 1);

    const query = `{ queues { name backlog running delayed oldestPendingAgeMs reserved allowed workers { id queues } } }`;
    const aQueues = (await a.request(query)).queues as any[];
    const workerId = aQueues.find((q) => q.name === 'http').workers[0].id;
    expect(aQueues.map(({ oldestPendingAgeMs, ...q }) => ({ ...q, waiting: oldestPendingAgeMs !== null }))).toEqual([
      { name: 'a-parked', backlog: 2, running: 0, delayed: 0, reserved: false, allowed: true, waiting: true, workers: [] },
      {
        name: 'gpu',
        backlog: 0,
        running: 1,
        delayed: 0,
        reserved: true,
        allowed: true,
        waiting: false,
        workers: [{ id: workerId, queues: QUEUES.split(',') }],
      },
      {
        name: 'gpu-late',
        backlog: 0,
        running: 0,
        delayed: 0,
        reserved: true,
        allowed: true,
        waiting: false,
        workers: [{ id: workerId, queues: QUEUES.split(',') }],
      },
      ...['http', 'js', 'python'].map((name) => ({
        name,
        backlog: 0,
        running: 0,
        delayed: 0,
        reserved: false,
        allowed: true,
        waiting: false,
        workers: [{ id: workerId, queues: QUEUES.split(',') }],
      })),
    ]);
    expect(aQueues[0].oldestPendingAgeMs).toBeGreaterThanOrEqual(0);

    const bQueues = (await b.request(query)).queues as any[];
    expect(bQueues).toEqual([
      { name: 'b-parked', backlog: 1, running: 0, delayed: 0, oldestPendingAgeMs: expect.any(Number), reserved: false, allowed: true, workers: [] },
      ...['http', 'js', 'python'].map((name) => ({
        name,
        backlog: 0,
        running: 0,
        delayed: 0,
        oldestPendingAgeMs: null,
        reserved: false,
        allowed: true,
        workers: [{ id: workerId, queues: ['http', 'python', 'js'] }],
      })),
    ]);
    expect(JSON.stringify(bQueues)).not.toMatch(/gpu|a-parked/);

    held.shift()!();
    expect((await waitRun(a, holding)).status).toBe('SUCCEEDED');
  });

  it('lists the live workers: the queues each tenant may use, and no host or pid even to an admin key', async () => {
    const fields = `{ workers { id host pid version queues concurrency startedAt lastHeartbeatAt drainingSince } }`;
    const [asAdmin] = (await a.request(fields)).workers;
    expect(asAdmin).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      host: null,
      pid: null,
      version: WEFT_VERSION,
      queues: QUEUES.split(','),
      concurrency: 4,
      startedAt: expect.any(String),
      lastHeartbeatAt: expect.any(String),
      drainingSince: null,
    });
    expect(Date.parse(asAdmin.lastHeartbeatAt)).toBeGreaterThanOrEqual(Date.parse(asAdmin.startedAt));
    expect((await aViewer.request(fields)).workers).toEqual([{ ...asAdmin, lastHeartbeatAt: expect.any(String) }]);
    expect((await b.request(fields)).workers).toEqual([{ ...asAdmin, queues: ['http', 'python', 'js'], lastHeartbeatAt: expect.any(String) }]);
    const [inQueues] = (await b.request(`{ queues { name workers { host pid } } }`)).queues.filter((q: { workers: unknown[] }) => q.workers.length > 0);
    expect(inQueues.workers).toEqual([{ host: null, pid: null }]);
  });

  it('prints the queues and the workers as tables with a header, and as JSON', async () => {
    const queues = (await weft(aKey, 'queues')).split('\n');
    expect(queues[0]).toMatch(/^QUEUE\s+BACKLOG\s+RUNNING\s+DELAYED\s+OLDEST\s+WORKERS\s+SLOTS\s+ACCESS$/);
    expect(queues.find((l) => l.startsWith('a-parked'))).toMatch(/^a-parked\s+2\s+0\s+0\s+\d+(\.\d)?(ms|s)\s+0\s+0\s+shared$/);
    expect(queues.find((l) => l.startsWith('gpu '))).toMatch(/^gpu\s+0\s+0\s+0\s+-\s+1\s+4\s+reserved$/);

    const workers = (await weft(aKey, 'workers')).split('\n');
    expect(workers[0]).toMatch(/^ID\s+VERSION\s+QUEUES\s+CONCURRENCY\s+STARTED\s+HEARTBEAT\s+STATE$/);
    expect(workers[1]).toMatch(new RegExp(`^[0-9a-f-]{36}\\s+${WEFT_VERSION}\\s+${QUEUES}\\s+4\\s+\\S+\\s+\\d.* ago\\s+live$`));
    // The operator's view, on the database: hosts and pids, every queue.
    const operator = (await admin('admin', 'workers')).split('\n');
    expect(operator[0]).toMatch(/^ID\s+HOST\s+PID\s+VERSION\s+QUEUES\s+CONCURRENCY\s+STARTED\s+HEARTBEAT\s+STATE$/);
    expect(operator[1]).toMatch(
      new RegExp(`^[0-9a-f-]{36}\\s+${hostname()}\\s+${process.pid}\\s+${WEFT_VERSION}\\s+${QUEUES}\\s+4\\s+\\S+\\s+\\d.* ago\\s+live$`),
    );
    const json = JSON.parse(await weft(bKey, 'workers', '-o', 'json'));
    expect(json).toEqual([expect.objectContaining({ queues: ['http', 'python', 'js'], concurrency: 4 })]);
    const yaml = await weft(bKey, 'queues', '-o', 'yaml');
    expect(yaml).toMatch(/^- name: b-parked\n {2}backlog: 1\n/);
    await expect(weft(bKey, 'queues', '-o', 'xml')).rejects.toThrow(/argument .xml. is invalid\. Allowed choices are table, json, yaml/);
  });
});
