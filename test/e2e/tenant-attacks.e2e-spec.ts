import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import type { WeftClient } from '@weft/client';
import { getRun, jsNode, publish, rejection, start, startE2E, task, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * The tenant attack suite: tenant B, holding an admin key (the most it can hold, so no
 * FORBIDDEN can hide a leak), drives every query, mutation and subscription of the API with
 * tenant A's ids — runs, workflows, versions, tasks, keys, idempotency keys, cursors — and must
 * get NOT_FOUND or nothing every time, while A's state stays exactly as it was.
 *
 * The schema's root fields are read by introspection and every one must be named by at least
 * one case, so a field added later without an attack case fails this suite.
 */

interface Attack {
  /** What B tries. */
  name: string;
  /** The root fields the attack exercises. */
  fields: string[];
  /** Runs the attack; resolves when B got NOT_FOUND or nothing of A's. */
  run: () => Promise<void>;
}

const NOT_FOUND = 'NOT_FOUND';

describe("tenant B attacking tenant A's objects", () => {
  let e2e: E2E;
  let a: WeftClient;
  let b: WeftClient;
  let bKey: string;
  const A = {
    workflowId: 'a-secret',
    waitingRun: '',
    failedRun: '',
    taskId: '',
    adminKeyId: '',
    viewerKeyId: '',
    idempotencyKey: 'a-order-42',
    idempotentRun: '',
    cursor: '',
    scheduleId: '',
    backfillId: '',
    keyCursor: '',
    batchId: '',
  };
  const sockets: Client[] = [];

  const expectNotFound = async (p: Promise<unknown>, what: string) => {
    const err = await rejection(p);
    expect({ what, code: err.code }).toEqual({ what, code: NOT_FOUND });
    // The answer carries nothing of A's data.
    for (const secret of ['4111-1111', 'A internal failure', 'A-only']) expect(JSON.stringify(err.errors)).not.toContain(secret);
  };

  function socket(apiKey: string): Client {
    const c = createClient({
      url: e2e.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${apiKey}` },
      retryAttempts: 0,
      lazy: true,
    });
    sockets.push(c);
    return c;
  }

  /** Every message of a subscription during `ms` (or until it ends). */
  function collect(c: Client, query: string, variables: Record<string, unknown>, ms: number): Promise<{ data: unknown[]; errors: any[]; closed?: unknown }> {
    return new Promise((resolve) => {
      const out: { data: unknown[]; errors: any[]; closed?: unknown } = { data: [], errors: [] };
      const stop = c.subscribe(
        { query, variables },
        {
          next: (m) => {
            if (m.data) out.data.push(m.data);
            if (m.errors) out.errors.push(...m.errors);
          },
          error: (e) => {
            if (Array.isArray(e)) out.errors.push(...e);
            else out.closed = e;
            resolve(out);
          },
          complete: () => resolve(out),
        },
      );
      setTimeout(() => {
        stop();
        resolve(out);
      }, ms);
    });
  }

  const signal = (c: WeftClient, runId: string, name: string) =>
    c.request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId, name } });

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client: a } = await e2e.tenant('victim'));
    ({ client: b, apiKey: bKey } = await e2e.tenant('attacker'));
    const gated = {
      nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: 600 } }, jsNode('after', 'return {secret: "A-only"};')],
      edges: [{ from: 'gate', to: 'after' }],
    };
    await publish(a, A.workflowId, gated);
    await publish(a, A.workflowId, {
      ...gated,
      nodes: [...gated.nodes, jsNode('extra', 'return {};')],
      edges: [...gated.edges, { from: 'after', to: 'extra' }],
    });
    A.waitingRun = await start(a, A.workflowId, { card: '4111-1111' }, { labels: { team: 'a-secret' } });
    const waiting = await waitRun(a, A.waitingRun, (r) => task(r, 'gate')?.status === 'WAITING');
    A.taskId = task(waiting, 'gate').id;
    await publish(a, 'a-fails', { nodes: [jsNode('boom', 'throw new Error("A internal failure");')], edges: [] });
    A.failedRun = await start(a, 'a-fails');
    await waitRun(a, A.failedRun);
    A.idempotentRun = await start(a, A.workflowId, {}, { idempotencyKey: A.idempotencyKey });
    await a.request(`mutation { updateTenantSettings(input: {retentionDays: 365}) { retentionDays } }`);
    const keys = await a.request(`{ apiKeys { id role } }`);
    A.adminKeyId = keys.apiKeys.find((k: { role: string }) => k.role === 'admin').id;
    A.viewerKeyId = (await a.request(`mutation { createApiKey(input: {name: "a-viewer", role: viewer}) { id } }`)).createApiKey.id;
    const page = await a.request(`{ runs(first: 1) { pageInfo { endCursor } } }`);
    A.cursor = page.runs.pageInfo.endCursor;
    // B has a workflow of its own, so "nothing" is distinguishable from "everything broken".
    await publish(b, 'b-own', { nodes: [jsNode('x', 'return {};')], edges: [] });
    // A has a backlog on a queue of its own that no worker serves.
    await publish(a, 'a-backlog', { nodes: [{ ...jsNode('queued', 'return {};'), queue: 'a-private' }], edges: [] });
    await start(a, 'a-backlog');
    // A has a concurrency group and a rate key (rows as the coordinator and weft_dispatch write them).
    const [{ tenant_id: aTenant }] = await e2e.owner.query(`SELECT tenant_id FROM runs WHERE id = $1`, [A.waitingRun]);
    await e2e.owner.query(
      `INSERT INTO concurrency_groups (tenant_id, group_key, scope, workflow_id, key, run_limit, updated_at) VALUES ($1, 'workflow:a-secret:a-secret-key', 'workflow', 'a-secret', 'a-secret-key', 2, now())`,
      [aTenant],
    );
    await e2e.owner.query(`UPDATE runs SET concurrency_group = 'workflow:a-secret:a-secret-key', concurrency_key = 'a-secret-key' WHERE id = $1`, [
      A.waitingRun,
    ]);
    await e2e.owner.query(`INSERT INTO flow_rate_starts (tenant_id, rate_key, started_at, task_id, attempt) VALUES ($1, 'a-secret-rate', now(), $2, 0)`, [
      aTenant,
      A.taskId,
    ]);
    A.keyCursor = (await a.request(`{ concurrencyKeys { pageInfo { endCursor } } }`)).concurrencyKeys.pageInfo.endCursor;
    // A has a schedule (that fires once a year) and a backfill of it.
    await publish(a, 'a-nightly', { nodes: [{ node_id: 'n', type: 'FORK' }], edges: [] });
    A.scheduleId = (await a.request(`mutation { createSchedule(input: {workflowId: "a-nightly", cron: "@yearly", note: "A-only"}) { id } }`)).createSchedule.id;
    A.backfillId = (
      await a.request(`mutation($id: ID!) { backfillSchedule(id: $id, from: "2029-01-01T00:00:00Z", to: "2030-01-01T00:00:00Z") { id } }`, { id: A.scheduleId })
    ).backfillSchedule.id;
    // A has a bulk action (over a label none of its runs carries: it acts on nothing).
    A.batchId = (
      await a.request(`mutation { createRunBatch(input: {action: PAUSE, filter: {labels: {team: "a-none"}}, idempotencyKey: "a-batch"}) { id } }`)
    ).createRunBatch.id;
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(sockets.map((s) => s.dispose()));
    await e2e?.close();
  });

  const attacks: Attack[] = [
    // --- queries
    {
      name: 'reads A’s waiting run by id',
      fields: ['run'],
      run: () => expectNotFound(b.request(`query($id: ID!) { run(id: $id) { id input } }`, { id: A.waitingRun }), 'run'),
    },
    {
      name: 'reads A’s failed run by id',
      fields: ['run'],
      run: () => expectNotFound(b.request(`query($id: ID!) { run(id: $id) { id error } }`, { id: A.failedRun }), 'run'),
    },
    {
      name: 'reads A’s task id as a run id',
      fields: ['run'],
      run: () => expectNotFound(b.request(`query($id: ID!) { run(id: $id) { id } }`, { id: A.taskId }), 'run'),
    },
    {
      name: 'reads the logs of A’s failed run’s attempts',
      fields: ['run'],
      run: () => expectNotFound(b.request(`query($id: ID!) { run(id: $id) { tasks { attempts { attempt logs error } } } }`, { id: A.failedRun }), 'run'),
    },
    {
      name: 'lists runs filtered by A’s workflow id',
      fields: ['runs'],
      run: async () => {
        const r = await b.request(`query($w: String) { runs(filter: {workflowId: $w}) { edges { node { id } } } }`, { w: A.workflowId });
        expect(r.runs.edges).toEqual([]);
      },
    },
    {
      name: 'lists every run, waiting and failed',
      fields: ['runs'],
      run: async () => {
        for (const status of [null, 'RUNNING', 'FAILED', 'SUCCEEDED', 'CANCELLED']) {
          const r = await b.request(`query($f: RunFilter) { runs(filter: $f, first: 200) { edges { node { id } } } }`, { f: status ? { status } : null });
          const ids = r.runs.edges.map((e: any) => e.node.id);
          expect(ids).not.toEqual(expect.arrayContaining([A.waitingRun]));
          for (const id of [A.waitingRun, A.failedRun, A.idempotentRun]) expect(ids).not.toContain(id);
        }
      },
    },
    {
      name: 'counts and lists runs by A’s labels, failed node and error text',
      fields: ['countRuns', 'runs'],
      run: async () => {
        const own = (await b.request(`{ runs(first: 200) { edges { node { id } } } countRuns }`)) as { runs: { edges: unknown[] }; countRuns: number };
        expect(own.countRuns).toBe(own.runs.edges.length);
        for (const f of [{ labels: { team: 'a-secret' } }, { failedNodeId: 'boom' }, { errorContains: 'A internal failure' }, { workflowId: A.workflowId }]) {
          const r = await b.request(`query($f: RunFilter) { runs(filter: $f) { edges { node { id } } } countRuns(filter: $f) }`, { f });
          expect(r.runs.edges).toEqual([]);
          expect(r.countRuns).toBe(0);
          // A's own filter finds them: the empty answer is the tenant boundary, not a filter that matches nothing.
          expect((await a.request(`query($f: RunFilter) { countRuns(filter: $f) }`, { f })).countRuns).toBeGreaterThan(0);
        }
      },
    },
    {
      name: 'pages runs with a cursor taken from A’s listing',
      fields: ['runs'],
      run: async () => {
        const r = await b.request(`query($after: String) { runs(after: $after, first: 200) { edges { node { id workflowId } } } }`, { after: A.cursor });
        for (const e of r.runs.edges) expect(e.node.workflowId).not.toBe(A.workflowId);
      },
    },
    {
      name: 'lists workflows',
      fields: ['workflows'],
      run: async () => {
        const r = await b.request(`{ workflows { id } }`);
        expect(r.workflows.map((w: any) => w.id)).toEqual(['b-own']);
      },
    },
    {
      name: 'reads A’s workflow',
      fields: ['workflow'],
      run: () => expectNotFound(b.request(`query($w: String!) { workflow(workflowId: $w) { id } }`, { w: A.workflowId }), 'workflow'),
    },
    {
      name: 'reads A’s latest version',
      fields: ['workflowVersion'],
      run: () =>
        expectNotFound(b.request(`query($w: String!) { workflowVersion(workflowId: $w) { version definition } }`, { w: A.workflowId }), 'workflowVersion'),
    },
    {
      name: 'reads each of A’s versions by number',
      fields: ['workflowVersion'],
      run: async () => {
        for (const version of [1, 2]) {
          await expectNotFound(
            b.request(`query($w: String!, $v: Int) { workflowVersion(workflowId: $w, version: $v) { definition } }`, { w: A.workflowId, v: version }),
            `workflowVersion v${version}`,
          );
        }
      },
    },
    {
      name: 'lists API keys',
      fields: ['apiKeys'],
      run: async () => {
        const ids = (await b.request(`{ apiKeys { id } }`)).apiKeys.map((k: any) => k.id);
        expect(ids).not.toContain(A.adminKeyId);
        expect(ids).not.toContain(A.viewerKeyId);
      },
    },
    {
      name: 'lists queues (A’s backlog and queue are not counted or named)',
      fields: ['queues'],
      run: async () => {
        const r = await b.request(`{ queues { name backlog running delayed oldestPendingAgeMs workers { queues } } }`);
        expect(JSON.stringify(r)).not.toContain('a-private');
        for (const q of r.queues)
          expect({ name: q.name, backlog: q.backlog, running: q.running, delayed: q.delayed }).toEqual({ name: q.name, backlog: 0, running: 0, delayed: 0 });
        const own = await a.request(`{ queues { name backlog } }`);
        expect(own.queues).toContainEqual({ name: 'a-private', backlog: 1 });
      },
    },
    {
      name: 'lists workers (none names A’s queue)',
      fields: ['workers'],
      run: async () => {
        const r = await b.request(`{ workers { id queues } }`);
        expect(r.workers.length).toBeGreaterThan(0);
        expect(JSON.stringify(r)).not.toContain('a-private');
      },
    },
    {
      name: 'lists concurrency keys (of A’s workflow, after A’s cursor): none of A’s',
      fields: ['concurrencyKeys'],
      run: async () => {
        const q = `query($w: String, $a: String) { concurrencyKeys(workflowId: $w, after: $a) { edges { node { key active queued } } } }`;
        for (const vars of [{}, { w: A.workflowId }, { a: A.keyCursor }]) {
          expect((await b.request(q, vars)).concurrencyKeys.edges).toEqual([]);
        }
        const own = await a.request(`{ concurrencyKeys { edges { node { key active } } } }`);
        expect(own.concurrencyKeys.edges).toEqual([{ node: { key: 'a-secret-key', active: 1 } }]);
      },
    },
    {
      name: 'lists rate limits: none of A’s',
      fields: ['rateLimits'],
      run: async () => {
        expect((await b.request(`{ rateLimits { key limit startedInWindow held } }`)).rateLimits).toEqual([]);
        expect((await a.request(`{ rateLimits { key } }`)).rateLimits).toEqual([{ key: 'a-secret-rate' }]);
      },
    },
    // --- mutations
    {
      name: 'starts A’s workflow',
      fields: ['startRun'],
      run: () => expectNotFound(b.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, { i: { workflowId: A.workflowId } }), 'startRun'),
    },
    {
      name: 'starts a pinned version of A’s workflow',
      fields: ['startRun'],
      run: () =>
        expectNotFound(
          b.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, { i: { workflowId: A.workflowId, version: 1 } }),
          'startRun v1',
        ),
    },
    {
      name: 'replays A’s idempotency key on A’s workflow',
      fields: ['startRun'],
      run: () =>
        expectNotFound(
          b.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, { i: { workflowId: A.workflowId, idempotencyKey: A.idempotencyKey } }),
          'startRun idempotent',
        ),
    },
    {
      name: 'replays A’s idempotency key on its own workflow',
      fields: ['startRun'],
      run: async () => {
        const r = await b.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id workflowId } }`, {
          i: { workflowId: 'b-own', idempotencyKey: A.idempotencyKey },
        });
        expect(r.startRun.id).not.toBe(A.idempotentRun);
        expect(r.startRun.workflowId).toBe('b-own');
      },
    },
    { name: 'signals A’s waiting run', fields: ['sendSignal'], run: () => expectNotFound(signal(b, A.waitingRun, 'go'), 'sendSignal') },
    {
      name: 'buffers a signal into A’s finished run',
      fields: ['sendSignal'],
      run: () => expectNotFound(signal(b, A.failedRun, 'later'), 'sendSignal buffered'),
    },
    {
      name: 'cancels A’s waiting run',
      fields: ['cancelRun'],
      run: () =>
        expectNotFound(
          b.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id } }`, { i: { runId: A.waitingRun, reason: 'pwned' } }),
          'cancelRun',
        ),
    },
    {
      name: 'retries A’s failed run',
      fields: ['retryRun'],
      run: () =>
        expectNotFound(b.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id } }`, { i: { runId: A.failedRun, fromNodeId: 'boom' } }), 'retryRun'),
    },
    {
      name: 'retries A’s failed run onto a version of its own workflow',
      fields: ['retryRun'],
      run: () =>
        expectNotFound(
          b.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id } }`, {
            i: { runId: A.failedRun, fromNodeId: 'boom', version: 1, input: { x: 1 } },
          }),
          'retryRun v',
        ),
    },
    {
      name: 'retries only the failed iterations of A’s failed run',
      fields: ['retryRun'],
      run: () =>
        expectNotFound(
          b.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id } }`, {
            i: { runId: A.failedRun, fromNodeId: 'boom', failedIterationsOnly: true },
          }),
          'retryRun failedIterationsOnly',
        ),
    },
    {
      name: 'pins a default version of A’s workflow',
      fields: ['setDefaultVersion'],
      run: () =>
        expectNotFound(b.request(`mutation($w: String!) { setDefaultVersion(workflowId: $w, version: 1) { id } }`, { w: A.workflowId }), 'setDefaultVersion'),
    },
    {
      name: 'unpins the default version of A’s workflow',
      fields: ['setDefaultVersion'],
      run: () =>
        expectNotFound(
          b.request(`mutation($w: String!) { setDefaultVersion(workflowId: $w, version: null) { id } }`, { w: A.workflowId }),
          'setDefaultVersion null',
        ),
    },
    {
      name: 'deprecates A’s version',
      fields: ['deprecateVersion'],
      run: () =>
        expectNotFound(
          b.request(`mutation($w: String!) { deprecateVersion(workflowId: $w, version: 2) { version } }`, { w: A.workflowId }),
          'deprecateVersion',
        ),
    },
    {
      name: 'revokes A’s admin key',
      fields: ['revokeApiKey'],
      run: () => expectNotFound(b.request(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: A.adminKeyId }), 'revokeApiKey admin'),
    },
    {
      name: 'revokes A’s viewer key',
      fields: ['revokeApiKey'],
      run: () => expectNotFound(b.request(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: A.viewerKeyId }), 'revokeApiKey viewer'),
    },
    {
      name: 'creates a key (it is B’s own and opens nothing of A’s)',
      fields: ['createApiKey'],
      run: async () => {
        const created = (await b.request(`mutation { createApiKey(input: {name: "b-probe", role: operator}) { id secret } }`)).createApiKey;
        const probe = socket(created.secret);
        const r = await collect(probe, `subscription($id: ID!) { runUpdated(runId: $id) { id } }`, { id: A.waitingRun }, 500);
        expect(r.data).toEqual([]);
        expect(r.errors[0]?.extensions?.code).toBe(NOT_FOUND);
      },
    },
    {
      name: 'publishes under A’s workflow id (creates B’s own workflow; A’s versions untouched)',
      fields: ['publishWorkflow'],
      run: async () => {
        const v = await publish(b, A.workflowId, { nodes: [jsNode('mine', 'return {};')], edges: [] });
        expect(v).toBe(1);
        const aw = await a.request(`query($w: String!) { workflow(workflowId: $w) { latestVersion versions { version } } }`, { w: A.workflowId });
        expect(aw.workflow.latestVersion).toBe(2);
        expect(aw.workflow.versions.map((x: any) => x.version)).toEqual([1, 2]);
        // B starting "its" a-secret runs B's definition, never A's.
        const runId = await start(b, A.workflowId);
        const run = await waitRun(b, runId);
        expect(run.tasks.map((t: any) => t.nodeId)).toEqual(['mine']);
      },
    },
    // --- subscriptions
    {
      name: 'subscribes to A’s waiting run',
      fields: ['runUpdated'],
      run: async () => {
        const watching = collect(socket(bKey), `subscription($id: ID!) { runUpdated(runId: $id) { id status tasks { output } } }`, { id: A.waitingRun }, 1500);
        const r = await watching;
        expect(r.data).toEqual([]);
        expect(r.errors.map((e) => e.extensions?.code)).toEqual([NOT_FOUND]);
      },
    },
    {
      name: 'watches every run change while A’s runs change (sees only its own)',
      fields: ['runChanged'],
      run: async () => {
        const watching = collect(socket(bKey), `subscription { runChanged { runId status seq } }`, {}, 2500);
        await new Promise((r) => setTimeout(r, 300));
        const aRun = await start(a, 'a-fails');
        const bRun = await start(b, 'b-own');
        await Promise.all([waitRun(a, aRun), waitRun(b, bRun)]);
        const r = await watching;
        const ids = r.data.map((d: any) => d.runChanged.runId);
        expect(ids).toContain(bRun);
        expect(ids).not.toContain(aRun);
        expect(r.errors).toEqual([]);
      },
    },
    {
      name: 'reads and changes tenant settings (its own; A keeps its retention)',
      fields: ['tenantSettings', 'updateTenantSettings'],
      run: async () => {
        expect((await b.request(`{ tenantSettings { retentionDays } }`)).tenantSettings).toEqual({ retentionDays: null });
        const set = await b.request(`mutation { updateTenantSettings(input: {retentionDays: 1}) { retentionDays } }`);
        expect(set.updateTenantSettings).toEqual({ retentionDays: 1 });
        expect((await a.request(`{ tenantSettings { retentionDays } }`)).tenantSettings).toEqual({ retentionDays: 365 });
        await b.request(`mutation { updateTenantSettings(input: {retentionDays: null}) { retentionDays } }`);
      },
    },
    {
      name: 'asks who it is (B’s own key, never A’s)',
      fields: ['whoami'],
      run: async () => {
        const me = (await b.request(`{ whoami { tenantId keyId keyName role } }`)).whoami;
        expect(me.keyId).not.toBe(A.adminKeyId);
        expect(me.keyId).not.toBe(A.viewerKeyId);
        expect(me.keyName).toBe('admin');
        const aMe = (await a.request(`{ whoami { tenantId } }`)).whoami;
        expect(me.tenantId).not.toBe(aMe.tenantId);
      },
    },
    {
      name: 'subscribes to A’s failed run',
      fields: ['runUpdated'],
      run: async () => {
        const r = await collect(socket(bKey), `subscription($id: ID!) { runUpdated(runId: $id) { id } }`, { id: A.failedRun }, 500);
        expect(r.data).toEqual([]);
        expect(r.errors.map((e) => e.extensions?.code)).toEqual([NOT_FOUND]);
      },
    },
    // --- schedules
    {
      name: 'lists schedules, and runs, by A’s workflow and schedule',
      fields: ['schedules', 'runs'],
      run: async () => {
        const own = await b.request(`query($w: String) { schedules(workflowId: $w) { edges { node { id } } } }`, { w: 'a-nightly' });
        expect(own.schedules.edges).toEqual([]);
        const all = await b.request(`{ schedules(first: 200) { edges { node { id } } } }`);
        expect(all.schedules.edges.map((e: any) => e.node.id)).not.toContain(A.scheduleId);
        const runs = await b.request(`query($s: ID) { runs(filter: {scheduleId: $s}) { edges { node { id } } } }`, { s: A.scheduleId });
        expect(runs.runs.edges).toEqual([]);
      },
    },
    {
      name: 'reads A’s schedule',
      fields: ['schedule'],
      run: () => expectNotFound(b.request(`query($id: ID!) { schedule(id: $id) { id note } }`, { id: A.scheduleId }), 'schedule'),
    },
    {
      name: 'reads A’s backfill',
      fields: ['scheduleBackfill'],
      run: () => expectNotFound(b.request(`query($id: ID!) { scheduleBackfill(id: $id) { id total } }`, { id: A.backfillId }), 'scheduleBackfill'),
    },
    {
      name: 'schedules A’s workflow: refused exactly as a workflow nobody has',
      fields: ['createSchedule'],
      run: async () => {
        const attempt = (w: string) => rejection(b.request(`mutation($w: String!) { createSchedule(input: {workflowId: $w, cron: "@daily"}) { id } }`, { w }));
        const [theirs, nobodys] = [await attempt('a-nightly'), await attempt('nobody-has-this')];
        expect(theirs.code).toBe('BAD_USER_INPUT');
        expect(theirs.errors[0]!.extensions!.problems).toEqual([{ path: 'workflowId', message: 'workflow a-nightly not found' }]);
        expect(nobodys.errors[0]!.extensions!.problems).toEqual([{ path: 'workflowId', message: 'workflow nobody-has-this not found' }]);
      },
    },
    {
      name: 'changes A’s schedule',
      fields: ['updateSchedule'],
      run: () =>
        expectNotFound(
          b.request(`mutation($i: UpdateScheduleInput!) { updateSchedule(input: $i) { id } }`, {
            i: { id: A.scheduleId, workflowId: 'b-own', cron: '* * * * *' },
          }),
          'updateSchedule',
        ),
    },
    {
      name: 'pauses and unpauses A’s schedule',
      fields: ['pauseSchedule', 'unpauseSchedule'],
      run: async () => {
        await expectNotFound(b.request(`mutation($id: ID!) { pauseSchedule(id: $id, note: "B") { id } }`, { id: A.scheduleId }), 'pauseSchedule');
        await expectNotFound(b.request(`mutation($id: ID!) { unpauseSchedule(id: $id, note: "B") { id } }`, { id: A.scheduleId }), 'unpauseSchedule');
      },
    },
    {
      name: 'fires A’s schedule now',
      fields: ['triggerSchedule'],
      run: () => expectNotFound(b.request(`mutation($id: ID!) { triggerSchedule(id: $id) { outcome run { id } } }`, { id: A.scheduleId }), 'triggerSchedule'),
    },
    {
      name: 'backfills A’s schedule',
      fields: ['backfillSchedule'],
      run: () =>
        expectNotFound(
          b.request(`mutation($id: ID!) { backfillSchedule(id: $id, from: "2031-01-01T00:00:00Z", to: "2032-01-01T00:00:00Z") { id } }`, { id: A.scheduleId }),
          'backfillSchedule',
        ),
    },
    {
      name: 'pauses and resumes A’s waiting run',
      fields: ['pauseRun', 'resumeRun'],
      run: async () => {
        await expectNotFound(b.request(`mutation($i: PauseRunInput!) { pauseRun(input: $i) { id } }`, { i: { runId: A.waitingRun } }), 'pauseRun');
        await expectNotFound(b.request(`mutation($i: ResumeRunInput!) { resumeRun(input: $i) { id } }`, { i: { runId: A.waitingRun } }), 'resumeRun');
      },
    },
    {
      name: 'reads and stops A’s bulk action, and lists bulk actions',
      fields: ['runBatch', 'stopRunBatch', 'runBatches'],
      run: async () => {
        await expectNotFound(b.request(`query($id: ID!) { runBatch(id: $id) { id total } }`, { id: A.batchId }), 'runBatch');
        await expectNotFound(b.request(`mutation($id: ID!) { stopRunBatch(id: $id) { id } }`, { id: A.batchId }), 'stopRunBatch');
        const listed = await b.request(`{ runBatches { edges { node { id } } } }`);
        expect(listed.runBatches.edges.map((e: { node: { id: string } }) => e.node.id)).not.toContain(A.batchId);
      },
    },
    {
      name: 'cancels in bulk the runs of A’s label, workflow and idempotency key',
      fields: ['createRunBatch'],
      run: async () => {
        for (const filter of [`{labels: {team: "a-secret"}}`, `{workflowId: "${A.workflowId}"}`, `{status: RUNNING}`]) {
          const created = (
            await b.request(`mutation { createRunBatch(input: {action: CANCEL, filter: ${filter}}) { total status items { edges { node { runId } } } } }`)
          ).createRunBatch;
          expect(created.items.edges.map((e: { node: { runId: string } }) => e.node.runId)).not.toContain(A.waitingRun);
        }
        // A's idempotency key names nothing of B's: B gets a batch of its own.
        const mine = (await b.request(`mutation { createRunBatch(input: {action: PAUSE, filter: {status: FAILED}, idempotencyKey: "a-batch"}) { id } }`))
          .createRunBatch;
        expect(mine.id).not.toBe(A.batchId);
      },
    },
    {
      name: 'deletes A’s schedule',
      fields: ['deleteSchedule'],
      run: () => expectNotFound(b.request(`mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: A.scheduleId }), 'deleteSchedule'),
    },
  ];

  it('covers every root field of the schema with at least one attack', async () => {
    const schema = await b.request(`{ __schema { queryType { fields { name } } mutationType { fields { name } } subscriptionType { fields { name } } } }`);
    const roots = ['queryType', 'mutationType', 'subscriptionType'].flatMap((t) => schema.__schema[t].fields.map((f: { name: string }) => f.name));
    const covered = new Set(attacks.flatMap((x) => x.fields));
    expect(roots.filter((f: string) => !covered.has(f))).toEqual([]);
  });

  it.each(attacks.map((x) => [x.name, x] as const))('B %s: NOT_FOUND or nothing', async (_name, attack) => {
    await attack.run();
  });

  it('leaves A’s state exactly as it was, and A still in control of it', async () => {
    const run = await getRun(a, A.waitingRun);
    expect(run.status).toBe('RUNNING');
    expect((await a.request(`query($id: ID!) { runBatch(id: $id) { status total } }`, { id: A.batchId })).runBatch).toEqual({ status: 'COMPLETED', total: 0 });
    expect(task(run, 'gate').status).toBe('WAITING');
    expect((await getRun(a, A.failedRun)).status).toBe('FAILED');
    const w = await a.request(`query($w: String!) { workflow(workflowId: $w) { defaultVersion latestVersion versions { version deprecated } } }`, {
      w: A.workflowId,
    });
    expect(w.workflow).toEqual({
      defaultVersion: 2,
      latestVersion: 2,
      versions: [
        { version: 1, deprecated: false },
        { version: 2, deprecated: false },
      ],
    });
    expect((await a.request(`{ tenantSettings { retentionDays } }`)).tenantSettings).toEqual({ retentionDays: 365 });
    const keys = (await a.request(`{ apiKeys { id revokedAt } }`)).apiKeys;
    expect(keys.filter((k: any) => [A.adminKeyId, A.viewerKeyId].includes(k.id)).map((k: any) => k.revokedAt)).toEqual([null, null]);
    const sched = (await a.request(`query($id: ID!) { schedule(id: $id) { paused note cron workflowId backfills { id } } }`, { id: A.scheduleId })).schedule;
    expect(sched).toEqual({ paused: false, note: 'A-only', cron: '@yearly', workflowId: 'a-nightly', backfills: [{ id: A.backfillId }] });
    expect(
      (await a.request(`query($s: ID) { runs(filter: {scheduleId: $s}) { edges { node { nominalTime } } } }`, { s: A.scheduleId })).runs.edges.length,
    ).toBeLessThanOrEqual(2);
    // A's own signal still reaches its node (no signal of B's was buffered into A's run first).
    expect((await signal(a, A.waitingRun, 'go')).sendSignal.delivered).toBe(true);
    const done = await waitRun(a, A.waitingRun);
    expect(done.status).toBe('SUCCEEDED');
    expect(task(done, 'gate').output).toEqual({});
    console.log(`tenant attack suite: ${attacks.length} attack cases over ${new Set(attacks.flatMap((x) => x.fields)).size} root fields`);
  });
});
