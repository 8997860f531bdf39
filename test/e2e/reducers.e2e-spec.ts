import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, rejection, start, startE2E, statuses, task, waitRun, type E2E } from '../support/e2e-platform.js';

/** Three employers: the second fails, the third carries a note. */
const EMPLOYERS = [
  { name: 'Acme', verified: true },
  { name: 'Globex', verified: false },
  { name: 'Initech', verified: true, note: 'contract role' },
];

/** One employer check: its own delta, `messages` null when it has nothing to say. */
const CHECK = `const e = input.employer;
  const messages = [];
  if (!e.verified) messages.push(e.name + ': employment could not be verified');
  if (e.note) messages.push(e.name + ': ' + e.note);
  return { failures: e.verified ? 0 : 1, messages: messages.length ? messages : null, checked: [e.name] };`;

/**
 * Employment verification as a static fan-out: a FORK checks three employers, a JOIN merges
 * their deltas (examples/employer-fanout.yaml does the same with `for_each`).
 */
const STATIC_FANOUT = {
  nodes: [
    { node_id: 'fan_out', type: 'FORK' },
    jsNode('check_current', CHECK, { employer: '{{input.employers[0]}}' }),
    jsNode('check_previous', CHECK, { employer: '{{input.employers[1]}}' }),
    jsNode('check_first', CHECK, { employer: '{{input.employers[2]}}' }),
    { node_id: 'verdict', type: 'JOIN', spec: { reducers: { failures: 'add', messages: 'append', checked: 'union' } } },
    jsNode(
      'decide',
      `const m = input.merged;
      return { status: m.failures === 0 ? 'verified' : 'needs_review', failures: m.failures, messages: m.messages ?? [], checked: m.checked };`,
      { merged: '{{tasks.verdict.output}}' },
    ),
  ],
  edges: [
    { from: 'fan_out', to: 'check_current' },
    { from: 'fan_out', to: 'check_previous' },
    { from: 'fan_out', to: 'check_first' },
    { from: 'check_current', to: 'verdict' },
    { from: 'check_previous', to: 'verdict' },
    { from: 'check_first', to: 'verdict' },
    { from: 'verdict', to: 'decide' },
  ],
};

describe('JOIN reducers over the API', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client } = await e2e.tenant('reducers'));
  });
  afterAll(() => e2e.close());

  it('merges a static employer fan-out: add on the failure count, append on messages in edge order', async () => {
    await publish(client, 'employer-fanout', STATIC_FANOUT);
    const run = await waitRun(client, await start(client, 'employer-fanout', { employers: EMPLOYERS }));

    expect(run.status).toBe('SUCCEEDED');
    expect(statuses(run)).toEqual({
      fan_out: 'COMPLETED',
      check_current: 'COMPLETED',
      check_previous: 'COMPLETED',
      check_first: 'COMPLETED',
      verdict: 'COMPLETED',
      decide: 'COMPLETED',
    });
    expect(task(run, 'check_current').output.messages).toBeNull(); // null: the identity of append
    expect(task(run, 'verdict').output).toEqual({
      failures: 1,
      messages: ['Globex: employment could not be verified', 'Initech: contract role'],
      checked: ['Acme', 'Globex', 'Initech'],
    });
    expect(run.output).toEqual({
      decide: {
        status: 'needs_review',
        failures: 1,
        messages: ['Globex: employment could not be verified', 'Initech: contract role'],
        checked: ['Acme', 'Globex', 'Initech'],
      },
    });

    const clean = await waitRun(client, await start(client, 'employer-fanout', { employers: EMPLOYERS.map((e) => ({ name: e.name, verified: true })) }));
    expect(clean.output.decide).toEqual({ status: 'verified', failures: 0, messages: [], checked: ['Acme', 'Globex', 'Initech'] });
  });

  it('merges in incoming-edge order even when the branches finish in another order', async () => {
    await publish(client, 'edge-order', {
      nodes: [
        { node_id: 'f', type: 'FORK' },
        jsNode('slow', `return new Promise((r) => setTimeout(() => r({ who: ['slow'], last: 'slow' }), 700));`),
        jsNode('fast', `return { who: ['fast'], last: 'fast' };`),
        { node_id: 'j', type: 'JOIN', spec: { reducers: { who: 'append' } } },
      ],
      edges: [
        { from: 'f', to: 'fast' },
        { from: 'f', to: 'slow' },
        { from: 'slow', to: 'j' },
        { from: 'fast', to: 'j' },
      ],
    });
    const run = await waitRun(client, await start(client, 'edge-order'));
    expect(run.status).toBe('SUCCEEDED');
    expect(task(run, 'j').output).toEqual({ who: ['slow', 'fast'], last: 'fast' });
  });

  it('fails the JOIN, naming the field, the reducer and the node, on a type mismatch', async () => {
    await publish(client, 'mismatch', {
      nodes: [
        { node_id: 'f', type: 'FORK' },
        jsNode('a', 'return { count: 1 };'),
        jsNode('b', "return { count: 'two' };"),
        { node_id: 'j', type: 'JOIN', spec: { reducers: { count: 'add' } } },
        jsNode('after', 'return {};'),
      ],
      edges: [
        { from: 'f', to: 'a' },
        { from: 'f', to: 'b' },
        { from: 'a', to: 'j' },
        { from: 'b', to: 'j' },
        { from: 'j', to: 'after' },
      ],
    });
    const run = await waitRun(client, await start(client, 'mismatch'));
    expect(run.status).toBe('FAILED');
    expect(task(run, 'j')).toMatchObject({
      status: 'FAILED',
      error: 'join j: field "count": reducer add expects a number, but node "b" gave a string',
    });
    expect(task(run, 'after')).toBeUndefined();
  });

  it('refuses to publish an unknown reducer with BAD_USER_INPUT naming the node and the field', async () => {
    const err = await rejection(
      publish(client, 'bad-reducer', {
        nodes: [{ node_id: 'f', type: 'FORK' }, jsNode('a', 'return {};'), { node_id: 'j', type: 'JOIN', spec: { reducers: { total: 'sum' } } }],
        edges: [
          { from: 'f', to: 'a' },
          { from: 'a', to: 'j' },
        ],
      }),
    );
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.errors[0].extensions!.problems).toEqual([
      expect.objectContaining({
        nodeId: 'j',
        path: 'nodes[2].spec.reducers.total',
        message: expect.stringContaining('unknown reducer "sum" for field "total"'),
      }),
    ]);
  });
});
