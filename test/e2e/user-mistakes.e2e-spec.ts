import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { runWeftCapturing } from '../support/cli.js';
import { publish, rejection, start, startE2E, task, waitRun, type E2E } from '../support/e2e-platform.js';
import { stubServer } from '../support/faults.js';

/**
 * Errors that point at the user's mistake, through the API: a misspelt spec key refused at
 * publish, a SUBWORKFLOW calling a workflow the tenant does not have warned about, a failed run
 * naming its failed node, and a signal no node can take refused with what the run waits for.
 */

const PUBLISH = `mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { workflowId version warnings { nodeId path message } } }`;
const publishWithWarnings = (client: WeftClient, workflowId: string, definition: unknown) =>
  client.request(PUBLISH, { i: { workflowId, definition: JSON.stringify(definition) } }).then((r) => r.publishWorkflow);
const signal = (client: WeftClient, runId: string, name: string) =>
  client
    .request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId, name } })
    .then((r) => r.sendSignal.delivered as boolean);

describe('errors that find the user’s mistake', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  let stub: Awaited<ReturnType<typeof stubServer>>;

  beforeAll(async () => {
    stub = await stubServer((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('card declined'));
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('mistakes'));
  });
  afterAll(async () => {
    await e2e.close();
    await stub.close();
  });

  it('refuses methd: POST at publish with BAD_USER_INPUT, listing the problem with its node, path and suggestion', async () => {
    const err = await rejection(
      publish(client, 'charge-flow', { nodes: [{ node_id: 'charge', type: 'HTTP', spec: { url: `${stub.base}/charges`, methd: 'POST' } }] }),
    );
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.errors[0]!.message).toBe('invalid workflow definition: 1 problem(s)');
    expect(err.errors[0]!.extensions!.problems).toEqual([
      {
        nodeId: 'charge',
        path: 'nodes[0].spec.methd',
        message:
          'unknown field "methd" in an HTTP spec (did you mean "method"?); expected one of url, method, headers, body, timeout_seconds, accept_status, response',
      },
    ]);
    expect((await client.request(`{ workflows { id } }`)).workflows).toEqual([]);
  });

  it('refuses a definition of only blanks, a comment or null as BAD_USER_INPUT, never an internal error', async () => {
    for (const definition of ['   \n', '# nodes to come\n', 'null', '~', '---\n', '42']) {
      const err = await rejection(client.request(PUBLISH, { i: { workflowId: 'blank', definition } }));
      expect({ definition, code: err.code, problems: err.errors[0]!.extensions!.problems }).toEqual({
        definition,
        code: 'BAD_USER_INPUT',
        problems: [expect.objectContaining({ message: expect.stringContaining('must be an object with a "nodes" list') })],
      });
    }
    expect((await client.request(`{ workflows { id } }`)).workflows).toEqual([]);
  });

  it('publishes a SUBWORKFLOW calling a workflow the tenant does not have, and returns the warning', async () => {
    await publish(client, 'payment', { nodes: [{ node_id: 'ok', type: 'WAIT', spec: { duration_seconds: 0 } }] });
    const published = await publishWithWarnings(client, 'order', {
      nodes: [
        { node_id: 'split', type: 'FORK' },
        { node_id: 'pay', type: 'SUBWORKFLOW', spec: { workflow: 'paymnet' } },
        { node_id: 'refund', type: 'SUBWORKFLOW', spec: { workflow: 'payment', version: 4 } },
        { node_id: 'again', type: 'SUBWORKFLOW', spec: { workflow: 'order' } },
        { node_id: 'dynamic', type: 'SUBWORKFLOW', spec: { workflow: '{{input.callee}}' } },
      ],
      edges: ['pay', 'refund', 'again', 'dynamic'].map((to) => ({ from: 'split', to })),
    });
    const warnings = [
      {
        nodeId: 'pay',
        path: 'nodes[1].spec.workflow',
        message:
          'SUBWORKFLOW node "pay" calls workflow "paymnet", which this tenant does not have (did you mean "payment"?); runs that reach the node will fail there until it is published',
      },
      {
        nodeId: 'refund',
        path: 'nodes[2].spec.workflow',
        message:
          'SUBWORKFLOW node "refund" calls version 4 of workflow "payment", whose latest version is 1; runs that reach the node will fail there until that version is published',
      },
    ];
    expect(published).toEqual({ workflowId: 'order', version: 1, warnings });
    // Read later, a version's warnings are as of then: publishing the missing workflow clears its one.
    const read = () => client.request(`{ workflowVersion(workflowId: "order") { warnings { nodeId path message } } }`).then((r) => r.workflowVersion.warnings);
    expect(await read()).toEqual(warnings);
    await publish(client, 'paymnet', { nodes: [{ node_id: 'ok', type: 'WAIT', spec: { duration_seconds: 0 } }] });
    expect(await read()).toEqual([warnings[1]]);
  });

  it('has weft apply print the warnings on stderr and the version on stdout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'weft-apply-'));
    try {
      const file = join(dir, 'caller.yaml');
      await writeFile(file, 'nodes:\n  - {node_id: call, type: SUBWORKFLOW, spec: {workflow: ghost}}\n');
      const { stdout, stderr } = await runWeftCapturing(e2e.url, apiKey, 'apply', '-f', file, '-o', 'json');
      expect(JSON.parse(stdout)).toMatchObject({ workflowId: 'caller', version: 1 });
      expect(JSON.parse(stdout).warnings).toBeUndefined();
      expect((await runWeftCapturing(e2e.url, apiKey, 'apply', '-f', file)).stdout).toBe(`workflow caller version 1 (${file})\n`);
      expect(stderr).toBe(
        'warning: call nodes[0].spec.workflow: SUBWORKFLOW node "call" calls workflow "ghost", which this tenant does not have; runs that reach the node will fail there until it is published\n',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names the failed node and its error in a failed run’s error', async () => {
    await publish(client, 'charge-flow', {
      nodes: [{ node_id: 'charge', type: 'HTTP', spec: { url: `${stub.base}/charges`, method: 'POST', body: { amount: 5 } } }],
    });
    const run = await waitRun(client, await start(client, 'charge-flow'));
    expect(run.status).toBe('FAILED');
    expect(task(run, 'charge').error).toBe(`HTTP POST ${stub.base}/charges returned status 500: card declined`);
    expect(run.error).toBe(`node charge failed: HTTP POST ${stub.base}/charges returned status 500: card declined`);
  });

  it('refuses a signal no node takes, saying which names the run waits for, and one to a finished run', async () => {
    await publish(client, 'approval', { nodes: [{ node_id: 'approve', type: 'WAIT_FOR_EVENT', spec: { event: 'approved', timeout_seconds: 600 } }] });
    const runId = await start(client, 'approval');
    await waitRun(client, runId, (r) => task(r, 'approve')?.status === 'WAITING');

    const err = await rejection(signal(client, runId, 'aproved'));
    const message = `run ${runId} is not waiting for signal "aproved"; it waits for "approved" (node approve) (did you mean "approved"?), and no WAIT_FOR_EVENT node of its workflow takes that name`;
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.errors[0]!.message).toBe(message);
    expect(err.errors[0]!.extensions!.problems).toEqual([{ message }]);

    expect(await signal(client, runId, 'approved')).toBe(true);
    expect((await waitRun(client, runId)).status).toBe('SUCCEEDED');
    const finished = await rejection(signal(client, runId, 'approved'));
    expect(finished.code).toBe('CONFLICT');
    expect(finished.errors[0]!.message).toBe(`run ${runId} is SUCCEEDED: it waits for no signal any more`);
  });
});
