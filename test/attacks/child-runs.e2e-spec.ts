import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { getRun, jsNode, publish, rejection, start, startE2E, task, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * retryRun on a run a SUBWORKFLOW node started: retried alone, the child would succeed while its
 * parents stayed FAILED for good, their SUBWORKFLOW tasks still citing the child's old failure.
 * So it is refused, pointing at the parent's node, and retrying the parent from there works.
 */

const LINK = `id status error parentRunId parentTaskId depth`;
/** Everything a refused retry must leave as it was. */
const STATE = `${LINK} seq output finishedAt tasks { id nodeId status attempt output error } children { ${LINK} } history { seq type }`;

const retry = (client: WeftClient, runId: string, fromNodeId: string, input?: unknown) =>
  client.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id status } }`, {
    i: input === undefined ? { runId, fromNodeId } : { runId, fromNodeId, input },
  });

describe('retryRun on a child run', () => {
  let e2e: E2E;
  let client: WeftClient;
  let top: string;
  let middle: string;
  let bottom: string;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client } = await e2e.tenant('child-retries'));
    // top --call--> middle --call--> bottom, which fails when asked for more than 3.
    await publish(client, 'bottom', {
      nodes: [jsNode('reserve', 'if (input.qty > 3) throw new Error("only 3 left"); return { reserved: input.qty };', { qty: '{{input.qty}}' })],
      edges: [],
      output: '{{tasks.reserve.output}}',
    });
    await publish(client, 'middle', {
      nodes: [{ node_id: 'call', type: 'SUBWORKFLOW', spec: { workflow: 'bottom', input: { qty: '{{input.qty}}' } } }],
      edges: [],
      output: '{{tasks.call.output}}',
    });
    await publish(client, 'top', {
      nodes: [{ node_id: 'stock', type: 'SUBWORKFLOW', spec: { workflow: 'middle', input: { qty: '{{input.qty}}' } } }],
      edges: [],
    });

    top = await start(client, 'top', { qty: 5 });
    const failed = await waitRun(client, top, undefined, 30_000, STATE);
    expect(failed.status).toBe('FAILED');
    middle = failed.children[0].id;
    const mid = await getRun(client, middle, STATE);
    expect(mid.status).toBe('FAILED');
    bottom = mid.children[0].id;
    expect(await getRun(client, bottom, STATE)).toMatchObject({ status: 'FAILED', depth: 2, parentRunId: middle });
  });
  afterAll(() => e2e.close());

  it('refuses the failed bottom run with CONFLICT naming its parent run and node, and changes nothing', async () => {
    const before = await Promise.all([top, middle, bottom].map((id) => getRun(client, id, STATE)));

    const err = await rejection(retry(client, bottom, 'reserve', { qty: 2 }));
    expect(err.code).toBe('CONFLICT');
    expect(err.errors[0].message).toBe(`run ${bottom} was started by run ${middle}'s node call; retry run ${middle} from node call instead`);

    expect(await Promise.all([top, middle, bottom].map((id) => getRun(client, id, STATE)))).toEqual(before);
  });

  it('refuses the middle run the same way, naming the top run and its node', async () => {
    const before = await getRun(client, middle, STATE);
    const err = await rejection(retry(client, middle, 'call'));
    expect(err.code).toBe('CONFLICT');
    expect(err.errors[0].message).toBe(`run ${middle} was started by run ${top}'s node stock; retry run ${top} from node stock instead`);
    expect(await getRun(client, middle, STATE)).toEqual(before);
  });

  it('retries the top run from its SUBWORKFLOW node: a new chain of children runs and everything succeeds', async () => {
    await retry(client, top, 'stock', { qty: 2 });
    const run = await waitRun(client, top, undefined, 30_000, STATE);
    expect(run.status).toBe('SUCCEEDED');
    expect(task(run, 'stock')).toMatchObject({ status: 'COMPLETED', output: { reserved: 2 }, error: null });
    expect(run.children.map((c: any) => c.status).sort()).toEqual(['FAILED', 'SUCCEEDED']);
    const newMiddle = run.children.find((c: any) => c.status === 'SUCCEEDED');
    const mid = await getRun(client, newMiddle.id, STATE);
    expect(mid.children).toEqual([expect.objectContaining({ status: 'SUCCEEDED', parentRunId: newMiddle.id, depth: 2 })]);
    // The old chain stays as it was: failed, and still not retryable on its own.
    expect((await getRun(client, bottom, STATE)).status).toBe('FAILED');
    expect((await rejection(retry(client, bottom, 'reserve'))).code).toBe('CONFLICT');
  });
});
