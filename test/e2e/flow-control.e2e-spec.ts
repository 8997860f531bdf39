import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { serverCommands } from '@weft/cli';
import { eventually } from '../support/faults.js';
import { runCommands, runWeft } from '../support/cli.js';
import { getRun, jsNode, publish, rejection, start, startE2E, task, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * Flow control through the API and the CLI: a run's priority (from startRun, else from the
 * definition), why QUEUED tasks and runs wait (a retry's backoff, a queue's backlog, a rate
 * limit, a run concurrency limit), the tenant's concurrency keys and rate limits, and the
 * operator's tenant weights. Runs are admitted or queued by the coordinator's run slots; a node's
 * rate-limited starts and a rate hold are rows written here by the database owner, the way
 * weft_dispatch writes them (no suite here runs a worker that a rate limit would hold).
 */

/** The dispatch window of a queue no worker serves: the coordinator's default `dispatchWindowFloor`. */
const WINDOW_FLOOR = 8;

describe('flow control API', () => {
  let e2e: E2E;
  let a: WeftClient;
  let b: WeftClient;
  let A: string;
  let aKey: string;
  const gated = { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: 600 } }], edges: [] };
  const owner = (text: string, params: unknown[] = []) => e2e.owner.query(text, params);
  const startRun = (c: WeftClient, input: Record<string, unknown>) =>
    c.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id priority concurrencyKey waitReason waitDetail } }`, { i: input });

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client: a, tenantId: A, apiKey: aKey } = await e2e.tenant('flow-a'));
    ({ client: b } = await e2e.tenant('flow-b'));
    await publish(a, 'gated', gated);
    await publish(a, 'urgent', { ...gated, priority: 2 });
  }, 60_000);

  afterAll(async () => {
    await e2e?.close();
  });

  describe('startRun priority', () => {
    it.each([0, 6, -1])('refuses priority %p, naming priority and the allowed range', async (priority) => {
      const err = await rejection(startRun(a, { workflowId: 'gated', priority }));
      expect(err.code).toBe('BAD_USER_INPUT');
      expect(err.message).toContain('priority must be an integer from 1 (first) to 5');
      expect(err.errors[0]!.extensions!.problems).toEqual([{ path: 'priority', message: 'must be an integer from 1 (first) to 5' }]);
    });

    it('refuses a priority that is not an integer, naming priority', async () => {
      const err = await rejection(startRun(a, { workflowId: 'gated', priority: 2.5 }));
      expect(err.code).toBe('BAD_USER_INPUT');
      expect(err.message).toContain('priority');
    });

    it("takes the start's priority, else the definition's, else 3", async () => {
      const given = (await startRun(a, { workflowId: 'gated', priority: 1 })).startRun;
      expect({ priority: given.priority, concurrencyKey: given.concurrencyKey, waitReason: given.waitReason, waitDetail: given.waitDetail }).toEqual({
        priority: 1,
        concurrencyKey: null,
        waitReason: null,
        waitDetail: null,
      });
      expect((await startRun(a, { workflowId: 'urgent' })).startRun.priority).toBe(2);
      expect((await startRun(a, { workflowId: 'urgent', priority: 5 })).startRun.priority).toBe(5);
      expect((await startRun(a, { workflowId: 'gated' })).startRun.priority).toBe(3);
      const [row] = await owner(`SELECT priority FROM runs WHERE id = $1`, [given.id]);
      expect(row.priority).toBe(1);
    });

    it('starts a run with weft run --priority', async () => {
      const out = await runWeft(e2e.url, aKey, 'run', 'urgent', '--priority', '4');
      const id = /^run (\S+) RUNNING\n$/.exec(out)![1]!;
      expect((await getRun(a, id, 'priority')).priority).toBe(4);
      await expect(runWeft(e2e.url, aKey, 'run', 'urgent', '--priority', '9')).rejects.toThrow('must be an integer from 1 (first) to 5');
    });
  });

  describe('why a task waits', () => {
    it('shows a retry waiting out its backoff as a detail without a reason', async () => {
      await publish(a, 'flaky', { nodes: [{ ...jsNode('boom', 'throw new Error("not yet");'), retry: { max_attempts: 3, backoff_seconds: 600 } }], edges: [] });
      const id = await start(a, 'flaky');
      const fields = `status tasks { nodeId status attempt waitReason waitDetail }`;
      const run = await waitRun(a, id, (r) => task(r, 'boom')?.status === 'QUEUED' && task(r, 'boom')?.attempt === 1, 30_000, fields);
      const t = task(run, 'boom');
      expect(t.waitReason).toBeNull();
      expect(t.waitDetail).toMatch(/^retry backoff until \d{4}-\d\d-\d\dT/);
      expect(run).toMatchObject({ status: 'RUNNING' });
    });

    it('shows a task waiting for a worker slot on a queue no worker serves as QUEUE_BACKLOG', async () => {
      await publish(a, 'nowhere', { nodes: [{ ...jsNode('work', 'return {};'), queue: 'nowhere' }], edges: [] });
      const ids: string[] = [];
      for (let i = 0; i <= WINDOW_FLOOR; i++) ids.push(await start(a, 'nowhere'));
      const fields = `id status waitReason tasks { id nodeId status waitReason waitDetail }`;
      const queued = await eventually('a task of queue nowhere left QUEUED', async () => {
        for (const id of ids) {
          const run = await getRun(a, id, fields);
          if (task(run, 'work')?.status === 'QUEUED') return run;
        }
        return undefined;
      });
      expect(queued.waitReason).toBeNull();
      expect(task(queued, 'work')).toMatchObject({ waitReason: 'QUEUE_BACKLOG', waitDetail: 'waiting for a worker slot on queue "nowhere"' });
      // A task a worker has (or may take at once) does not wait.
      const dispatched = await getRun(a, ids[0]!, fields);
      expect(task(dispatched, 'work')).toMatchObject({ status: 'PENDING', waitReason: null, waitDetail: null });
      // Held by its rate limit, as weft_dispatch holds it: the key's window as it stands now, not
      // the sentence the hold was written with (no start in the window: the next start is now).
      const taskId = task(queued, 'work').id;
      await owner(`UPDATE tasks SET flow_rate_key = 'partner', flow_rate_limit = 20, flow_rate_per_seconds = 60 WHERE id = $1`, [taskId]);
      await owner(
        `UPDATE outbox SET hold_reason = 'RATE_LIMIT', hold_detail = 'rate limit "partner" 20 per 60 s, next start 23:59:59.000Z', held_until = now() + interval '10 minutes'
          WHERE task_id = $1 AND enqueued_at IS NULL`,
        [taskId],
      );
      const [{ now }] = await owner(`SELECT now() AS now`);
      const held = await getRun(a, queued.id, fields);
      expect(task(held, 'work')).toMatchObject({
        status: 'QUEUED',
        waitReason: 'RATE_LIMIT',
        waitDetail: expect.stringMatching(/^rate limit "partner" 20 per 60 s, next start \d\d:\d\d:\d\d\.\d{3}Z$/),
      });
      const next = Date.parse(`${new Date(now).toISOString().slice(0, 11)}${task(held, 'work').waitDetail.split('next start ')[1]}`);
      expect(Math.abs(next - new Date(now).getTime())).toBeLessThan(60_000);
      // Tenant B reads none of it.
      await expect(rejection(getRun(b, queued.id, fields))).resolves.toMatchObject({ code: 'NOT_FOUND' });
    });
  });

  describe('rate limits', () => {
    it('lists the rate keys started in the last day or held now, with the window by the database clock', async () => {
      const [gate] = await owner(`SELECT t.id FROM tasks t JOIN runs r ON r.id = t.run_id WHERE r.tenant_id = $1 AND r.workflow_id = 'gated' LIMIT 1`, [A]);
      await owner(
        `UPDATE tasks SET flow_rate_key = 'partner', flow_rate_limit = 10, flow_rate_per_seconds = 60, created_at = created_at - interval '1 hour' WHERE id = $1`,
        [gate.id],
      );
      const starts: [string, string][] = [
        ['partner', '1 second'],
        ['partner', '5 seconds'],
        ['partner', '30 seconds'],
        ['partner', '2 hours'],
        ['stale', '2 days'],
        ['daily', '3 hours'],
      ];
      for (const [key, ago] of starts) {
        await owner(`INSERT INTO flow_rate_starts (tenant_id, rate_key, started_at, task_id, attempt) VALUES ($1, $2, now() - $3::interval, $4, 0)`, [
          A,
          key,
          ago,
          gate.id,
        ]);
      }
      const r = await a.request(`{ rateLimits { key limit perSeconds startedInWindow held nextStartAt } }`);
      const partner = r.rateLimits.find((x: any) => x.key === 'partner');
      // The held task is the most recent with the key: its limit (20), not the gate's (10).
      expect(partner).toMatchObject({ key: 'partner', limit: 20, perSeconds: 60, startedInWindow: 3, held: 1 });
      expect(Date.parse(partner.nextStartAt)).toBeGreaterThan(Date.now());
      expect(r.rateLimits.find((x: any) => x.key === 'daily')).toEqual({
        key: 'daily',
        limit: 10,
        perSeconds: 60,
        startedInWindow: 0,
        held: 0,
        nextStartAt: null,
      });
      expect(r.rateLimits.map((x: any) => x.key)).toEqual(['daily', 'partner']);
      expect((await b.request(`{ rateLimits { key } }`)).rateLimits).toEqual([]);
    });

    it('prints them with weft flow rate-limits', async () => {
      const out = await runWeft(e2e.url, aKey, 'flow', 'rate-limits');
      expect(out.split('\n')[0]).toMatch(/^KEY\s+LIMIT\s+WINDOW\s+STARTED\s+HELD\s+NEXT START$/);
      expect(out).toMatch(/partner\s+20\s+60s\s+3\s+1\s+\d{4}-/);
      const json = JSON.parse(await runWeft(e2e.url, aKey, 'flow', 'rate-limits', '-o', 'json'));
      expect(json.map((x: any) => x.key)).toEqual(['daily', 'partner']);
    });
  });

  describe('concurrency keys and QUEUED runs', () => {
    let queuedRun: string;
    const limited = (concurrency: Record<string, unknown>, nodes: unknown[] = gated.nodes) => ({ nodes, edges: [], concurrency });
    const instant = [{ node_id: 'n', type: 'FORK' }];

    beforeAll(async () => {
      await publish(a, 'limited', limited({ key: '{{ input.customer }}', limit: 2 }));
      await publish(a, 'shared-user', limited({ key: '{{ input.db }}', limit: 5, scope: 'tenant' }));
      await publish(a, 'quick', limited({ key: '{{ input.k }}', limit: 3 }, instant));
      await publish(a, 'quick-tenant', limited({ key: '{{ input.k }}', limit: 1, scope: 'tenant' }, instant));
      const running = [
        await start(a, 'limited', { customer: 'acme' }),
        await start(a, 'limited', { customer: 'acme' }),
        await start(a, 'shared-user', { db: 'shared' }),
      ];
      queuedRun = await start(a, 'limited', { customer: 'acme' });
      await Promise.all(running.map((id) => waitRun(a, id, (r) => r.status === 'RUNNING')));
      for (const [w, k] of [
        ['quick', 'x'],
        ['quick-tenant', 'unused'],
      ])
        await waitRun(a, await start(a, w!, { k }));
    });

    it('shows why a QUEUED run waits, and its concurrency key', async () => {
      const run = await getRun(a, queuedRun, `status priority concurrencyKey waitReason waitDetail`);
      expect(run).toEqual({
        status: 'QUEUED',
        priority: 3,
        concurrencyKey: 'acme',
        waitReason: 'CONCURRENCY_LIMIT',
        waitDetail: 'concurrency limit 2 reached for key "acme" (2 active, 1 queued)',
      });
      const page = await a.request(`{ runs(filter: {status: QUEUED}) { edges { node { id waitReason waitDetail } } } }`);
      expect(page.runs.edges.map((e: any) => e.node)).toEqual([
        { id: queuedRun, waitReason: 'CONCURRENCY_LIMIT', waitDetail: 'concurrency limit 2 reached for key "acme" (2 active, 1 queued)' },
      ]);
      expect((await b.request(`{ runs(filter: {status: QUEUED}) { edges { node { id } } } }`)).runs.edges).toEqual([]);
    });

    it('lists the concurrency keys by key, page by page', async () => {
      const q = `query($w: String, $n: Int, $a: String) { concurrencyKeys(workflowId: $w, first: $n, after: $a) {
        edges { cursor node { scope workflowId key limit active queued } } pageInfo { hasNextPage endCursor } } }`;
      const all = (await a.request(q, {})).concurrencyKeys;
      expect(all.edges.map((e: any) => e.node)).toEqual([
        { scope: 'workflow', workflowId: 'limited', key: 'acme', limit: 2, active: 2, queued: 1 },
        { scope: 'tenant', workflowId: null, key: 'shared', limit: 5, active: 1, queued: 0 },
        { scope: 'tenant', workflowId: null, key: 'unused', limit: 1, active: 0, queued: 0 },
        { scope: 'workflow', workflowId: 'quick', key: 'x', limit: 3, active: 0, queued: 0 },
      ]);
      expect(all.pageInfo.hasNextPage).toBe(false);
      const first = (await a.request(q, { n: 2 })).concurrencyKeys;
      expect(first.edges.map((e: any) => e.node.key)).toEqual(['acme', 'shared']);
      expect(first.pageInfo.hasNextPage).toBe(true);
      const second = (await a.request(q, { n: 2, a: first.pageInfo.endCursor })).concurrencyKeys;
      expect(second.edges.map((e: any) => e.node.key)).toEqual(['unused', 'x']);
      expect(second.pageInfo).toEqual({ hasNextPage: false, endCursor: second.edges[1].cursor });
      // One workflow: its own groups and the tenant-scoped groups its runs joined.
      const keysOf = async (w: string) => (await a.request(q, { w })).concurrencyKeys.edges.map((e: any) => e.node.key);
      expect(await keysOf('limited')).toEqual(['acme']);
      expect(await keysOf('shared-user')).toEqual(['shared']);
      expect(await keysOf('quick-tenant')).toEqual(['unused']);
      expect(await keysOf('gated')).toEqual([]);
      expect((await b.request(q, {})).concurrencyKeys.edges).toEqual([]);
    });

    it('refuses a page size out of range and a cursor it did not make', async () => {
      for (const n of [0, 201]) {
        const err = await rejection(a.request(`query($n: Int) { concurrencyKeys(first: $n) { edges { cursor } } }`, { n }));
        expect({ n, code: err.code, problems: err.errors[0]!.extensions!.problems }).toEqual({
          n,
          code: 'BAD_USER_INPUT',
          problems: [{ path: 'first', message: 'must be between 1 and 200' }],
        });
      }
      // Not a cursor at all, and a well-formed one carrying a NUL character no stored key can hold.
      const forged = Buffer.from(JSON.stringify(['a\u0000', 'workflow:limited:a\u0000']), 'utf8').toString('base64url');
      for (const after of ['bm90IGEgY3Vyc29y', forged]) {
        const err = await rejection(a.request(`query($a: String) { concurrencyKeys(after: $a) { edges { cursor } } }`, { a: after }));
        expect({ after, code: err.code, message: err.message }).toEqual({ after, code: 'BAD_USER_INPUT', message: expect.stringMatching(/cursor/) });
      }
    });

    it('prints them with weft flow keys, and QUEUED runs with weft runs --status QUEUED', async () => {
      const out = await runWeft(e2e.url, aKey, 'flow', 'keys');
      expect(
        out
          .trimEnd()
          .split('\n')
          .map((line) => line.split(/\s+/)),
      ).toEqual([
        ['SCOPE', 'WORKFLOW', 'KEY', 'LIMIT', 'ACTIVE', 'QUEUED'],
        ['workflow', 'limited', 'acme', '2', '2', '1'],
        ['tenant', '-', 'shared', '5', '1', '0'],
        ['tenant', '-', 'unused', '1', '0', '0'],
        ['workflow', 'quick', 'x', '3', '0', '0'],
      ]);
      expect(await runWeft(e2e.url, aKey, 'flow', 'keys', '--workflow', 'shared-user')).toMatch(/^SCOPE.*\ntenant\s+-\s+shared\s+5\s+1\s+0\n$/);
      const runs = await runWeft(e2e.url, aKey, 'runs', '--status', 'queued');
      expect(runs).toContain(queuedRun);
      const status = await runWeft(e2e.url, aKey, 'run-status', queuedRun);
      expect(status).toMatch(/waiting\s+CONCURRENCY_LIMIT: concurrency limit 2 reached for key "acme" \(2 active, 1 queued\)/);
      expect(status).toMatch(/priority\s+3/);
    });
  });

  describe('weft admin tenant-weight', () => {
    const admin = (...args: string[]) =>
      runCommands(serverCommands, { DATABASE_URL: e2e.dbUrl, DATABASE_OWNER_URL: e2e.dbOwnerUrl }, 'admin', 'tenant-weight', ...args);

    it('prints and sets a tenant’s dispatch weight', async () => {
      expect(await admin(A)).toBe(`tenant ${A} has dispatch weight 1\n`);
      expect(await admin(A, '7')).toBe(`tenant ${A} dispatch weight 1 -> 7\n`);
      expect(await admin(A.toUpperCase())).toBe(`tenant ${A} has dispatch weight 7\n`);
      const [row] = await owner(`SELECT dispatch_weight FROM tenants WHERE id = $1`, [A]);
      expect(row.dispatch_weight).toBe(7);
    });

    it('refuses a weight out of range and an unknown tenant, naming them', async () => {
      await expect(admin(A, '0')).rejects.toThrow('weight must be an integer from 1 to 100');
      await expect(admin(A, '101')).rejects.toThrow('weight must be an integer from 1 to 100');
      await expect(admin(A, '2.5')).rejects.toThrow('weight must be an integer from 1 to 100');
      await expect(admin('0190a0a0-0000-7000-8000-000000000000', '2')).rejects.toThrow('unknown tenant 0190a0a0-0000-7000-8000-000000000000');
      await expect(admin('acme')).rejects.toThrow('is not a tenant id');
      const [row] = await owner(`SELECT dispatch_weight FROM tenants WHERE id = $1`, [A]);
      expect(row.dispatch_weight).toBe(7);
    });
  });
});
