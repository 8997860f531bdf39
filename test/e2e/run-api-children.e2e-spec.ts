import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TenantRepository, withTenant } from '@weft/persistence';
import { WeftClient } from '@weft/client';
import { startPlatform, type RunningPlatform } from '@weft/cli';
import { runWeft } from '../support/cli.js';
import { jsNode, publish, rejection, testConfig } from '../support/e2e-platform.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * The read side of for_each iterations and child runs over GraphQL and `weft run-status`:
 * Task.iteration, Run.parentRunId / parentTaskId / depth / children, the mermaid of a fan-out,
 * and the redaction of a sensitive node's iterations. The engine's own suites produce these rows
 * by running workflows; here they are written directly (as the tables' owner) so the API is
 * tested on exactly the shapes the migration defines, with only the API running.
 */
describe('iterations and child runs through the API and the CLI', () => {
  let db: TestDatabase;
  let platform: RunningPlatform;
  let url: string;
  let apiKey: string;
  let client: WeftClient;
  let tenantId: string;

  const parent = randomUUID();
  const manyChildren = randomUUID();
  const [child1, child2] = [randomUUID(), randomUUID()];
  const settleTask = randomUUID();
  // Ids chosen so that id order (the tie-break of equal created_at) is not index order, and the
  // aggregate sorts after its iterations.
  const fetchAgg = 'ffffffff-0000-4000-8000-000000000000';
  const iter = [
    '40000000-0000-4000-8000-000000000000',
    '10000000-0000-4000-8000-000000000000',
    '30000000-0000-4000-8000-000000000000',
    '20000000-0000-4000-8000-000000000000',
  ];

  const sql = (query: string, params: unknown[] = []) => withTenant(db.owner, tenantId, (m) => m.query(query, params));
  const insertRun = (
    id: string,
    workflowId: string,
    at: string,
    extra: { parent?: string; task?: string; attempt?: number; depth?: number; status?: string } = {},
  ) =>
    sql(
      `INSERT INTO runs (tenant_id, id, workflow_id, version, status, input, config, created_at, updated_at, parent_run_id, parent_task_id, parent_attempt, depth, root_run_id)
       VALUES ($1, $2, $3, 1, $4, '{}', '{}', $5, $5, $6, $7, $8, $9, $6)`,
      [tenantId, id, workflowId, extra.status ?? 'RUNNING', at, extra.parent ?? null, extra.task ?? null, extra.attempt ?? null, extra.depth ?? 0],
    );
  const insertTask = (id: string, nodeId: string, status: string, at: string, extra: { iteration?: number; output?: unknown; error?: string } = {}) =>
    sql(
      `INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, status, attempt, input, output, error, iteration, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'CODE', $5, 0, $6, $7, $8, $9, $10, $10)`,
      [
        tenantId,
        id,
        parent,
        nodeId,
        status,
        JSON.stringify({ token: `in-${nodeId}` }),
        extra.output === undefined ? null : JSON.stringify(extra.output),
        extra.error ?? null,
        extra.iteration ?? null,
        at,
      ],
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    platform = await startPlatform(testConfig(db), { api: true, host: '127.0.0.1' });
    url = platform.url!;
    ({ tenantId, apiKey } = await new TenantRepository(db.ds).createTenant('children'));
    client = new WeftClient(url, apiKey);
    await publish(client, 'batch', {
      nodes: [jsNode('start', 'return {n: 4};'), { ...jsNode('fetch', 'return {token: "s3cr3t"};'), sensitive: true }, jsNode('settle', 'return {};')],
      edges: [
        { from: 'start', to: 'fetch' },
        { from: 'fetch', to: 'settle' },
      ],
    });
    await publish(client, 'payments', { nodes: [jsNode('pay', 'return {paid: true};')], edges: [] });

    const t0 = '2030-01-01T00:00:00Z';
    const t1 = '2030-01-01T00:00:01Z';
    await insertRun(parent, 'batch', t0);
    await insertTask(randomUUID(), 'start', 'COMPLETED', t0, { output: { n: 4 } });
    // One event creates the aggregate and its iterations: same created_at.
    await insertTask(fetchAgg, 'fetch', 'RUNNING', t1);
    await insertTask(iter[0]!, 'fetch', 'COMPLETED', t1, { iteration: 0, output: { token: 's3cr3t' } });
    await insertTask(iter[1]!, 'fetch', 'FAILED', t1, { iteration: 1, error: 'boom' });
    await insertTask(iter[2]!, 'fetch', 'RUNNING', t1, { iteration: 2 });
    await insertTask(iter[3]!, 'fetch', 'WAITING', t1, { iteration: 3 });
    await insertTask(settleTask, 'settle', 'WAITING', '2030-01-01T00:00:02Z');
    // The younger child is written first: the API must order by creation, not by insertion.
    await insertRun(child2, 'payments', '2030-01-01T00:00:04Z', { parent, task: settleTask, attempt: 1, depth: 1, status: 'RUNNING' });
    await insertRun(child1, 'payments', '2030-01-01T00:00:03Z', { parent, task: settleTask, attempt: 0, depth: 1, status: 'FAILED' });

    await insertRun(manyChildren, 'batch', t0);
    await sql(
      `INSERT INTO runs (tenant_id, id, workflow_id, version, status, created_at, updated_at, parent_run_id, parent_task_id, parent_attempt, depth, root_run_id)
       SELECT $1, gen_random_uuid(), 'payments', 1, 'SUCCEEDED', timestamptz '2030-02-01' + i * interval '1 second', now(), $2, $3, i, 1, $2
       FROM generate_series(0, 104) AS i`,
      [tenantId, manyChildren, randomUUID()],
    );
  });

  afterAll(async () => {
    await client?.close();
    await platform?.close();
    await db?.drop();
  });

  const read = async (id: string, fields: string) => (await client.request(`query($id: ID!) { run(id: $id) { ${fields} } }`, { id })).run;

  it("lists a for_each node's iterations after its aggregate task in index order, all of them redacted for a sensitive node", async () => {
    const run = await read(parent, 'tasks { id nodeId iteration status input output error }');
    expect(run.tasks.map((t: any) => [t.nodeId, t.iteration, t.status])).toEqual([
      ['start', null, 'COMPLETED'],
      ['fetch', null, 'RUNNING'],
      ['fetch', 0, 'COMPLETED'],
      ['fetch', 1, 'FAILED'],
      ['fetch', 2, 'RUNNING'],
      ['fetch', 3, 'WAITING'],
      ['settle', null, 'WAITING'],
    ]);
    expect(run.tasks[1].id).toBe(fetchAgg);
    for (const t of run.tasks.filter((t: any) => t.nodeId === 'fetch')) expect([t.input, t.output]).toEqual([null, null]);
    expect(JSON.stringify(run.tasks)).not.toContain('s3cr3t');
    // A node that is not sensitive keeps its input and output; errors are not redacted.
    expect(run.tasks[0]).toMatchObject({ input: { token: 'in-start' }, output: { n: 4 } });
    expect(run.tasks[3].error).toBe('boom');
  });

  it('gives a run its parent, the starting task and its depth, and a parent its children oldest first', async () => {
    const run = await read(parent, 'parentRunId parentTaskId depth children { id workflowId status parentRunId parentTaskId depth }');
    expect(run).toMatchObject({ parentRunId: null, parentTaskId: null, depth: 0 });
    expect(run.children).toEqual([
      { id: child1, workflowId: 'payments', status: 'FAILED', parentRunId: parent, parentTaskId: settleTask, depth: 1 },
      { id: child2, workflowId: 'payments', status: 'RUNNING', parentRunId: parent, parentTaskId: settleTask, depth: 1 },
    ]);
    expect(await read(child1, 'parentRunId parentTaskId depth children { id }')).toEqual({
      parentRunId: parent,
      parentTaskId: settleTask,
      depth: 1,
      children: [],
    });
  });

  it('returns only the oldest 100 children', async () => {
    const run = await read(manyChildren, 'children { id createdAt }');
    expect(run.children).toHaveLength(100);
    const times = run.children.map((c: any) => Date.parse(c.createdAt));
    expect(times[0]).toBe(Date.parse('2030-02-01T00:00:00Z'));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("hides a run's children from another tenant, as the run itself", async () => {
    const other = await new TenantRepository(db.ds).createTenant('other');
    const stranger = new WeftClient(url, other.apiKey);
    try {
      const err = await rejection(stranger.request(`query($id: ID!) { run(id: $id) { children { id } } }`, { id: parent }));
      expect(err.code).toBe('NOT_FOUND');
    } finally {
      await stranger.close();
    }
  });

  it("draws the for_each node with its iteration counts and the aggregate's status", async () => {
    const { mermaid } = await read(parent, 'mermaid');
    expect(mermaid).toContain('["fetch ×4: 1 completed, 1 running, 1 waiting, 1 failed<br/>CODE<br/>RUNNING"]:::running');
  });

  it('weft run-status shows one entry per node with the iteration counts, failed iterations and the children', async () => {
    const shown = JSON.parse(await runWeft(url, apiKey, 'run-status', parent, '-o', 'json'));
    expect(shown.tasks.map((t: any) => t.nodeId)).toEqual(['start', 'fetch', 'settle']);
    expect(shown.tasks[1]).toMatchObject({
      status: 'RUNNING',
      iterations: '×4: 1 completed, 1 running, 1 waiting, 1 failed',
      failedIterations: [{ iteration: 1, attempt: 0, error: 'boom' }],
    });
    expect(shown.tasks[0].iterations).toBeUndefined();
    expect(shown.children).toEqual([
      { id: child1, workflowId: 'payments', status: 'FAILED', nodeId: 'settle' },
      { id: child2, workflowId: 'payments', status: 'RUNNING', nodeId: 'settle' },
    ]);
    expect(shown.parent).toBeUndefined();
  });

  it('weft run-status of a child run names its parent; --mermaid prints the flowchart', async () => {
    const shown = JSON.parse(await runWeft(url, apiKey, 'run-status', child1, '-o', 'json'));
    expect(shown).toMatchObject({ id: child1, depth: 1, parent: { id: parent, workflowId: 'batch', status: 'RUNNING', taskId: settleTask } });
    expect(shown.children).toBeUndefined();
    const text = await runWeft(url, apiKey, 'run-status', parent, '--mermaid');
    expect(text.startsWith('flowchart TD\n')).toBe(true);
    expect(text).toContain('fetch ×4');
  });
});
