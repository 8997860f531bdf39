import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { getRun, iterations, publish, start, startE2E, task as node, waitRun, type E2E } from '../support/e2e-platform.js';
import { stubServer } from '../support/faults.js';

/** Run fields with the for_each and SUBWORKFLOW additions (task iteration, parent, depth, children). */
const FIELDS = `id status workflowId input output error parentRunId depth
  tasks { id nodeId status attempt input output error iteration }
  children { id status workflowId input output error parentRunId parentTaskId depth }`;

const read = (client: WeftClient, id: string) => getRun(client, id, FIELDS);

/** Polls the run (with FIELDS) until it ended. */
const finished = (client: WeftClient, id: string, timeoutMs = 30_000) => waitRun(client, id, undefined, timeoutMs, FIELDS);

/**
 * The employment verification service examples/employer-fanout.yaml calls: `POST /verify` with
 * `{employer: {name, note?}, position}` answers the check's delta `{failures, messages, checked}`.
 * It knows Acme, Initech and Hooli; Acme answers slowly (so it finishes last), Hooli fails its
 * first call with 503. The stub records each request and the most it held at once.
 */
async function verificationService() {
  const known = new Set(['Acme', 'Initech', 'Hooli']);
  const stub = await stubServer((_req, res, _n, raw) => {
    const { employer } = JSON.parse(raw);
    const answer = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (employer.name === 'Hooli' && calls(employer.name) === 1) return setTimeout(() => answer(503, { error: 'registry busy' }), 20);
    const messages: string[] = [];
    if (!known.has(employer.name)) messages.push(`${employer.name}: employment could not be verified`);
    if (employer.note) messages.push(`${employer.name}: ${employer.note}`);
    const body = { failures: known.has(employer.name) ? 0 : 1, messages: messages.length ? messages : null, checked: [employer.name] };
    setTimeout(() => answer(200, body), employer.name === 'Acme' ? 600 : 50);
  });
  const requests = () => stub.hits.map((h) => JSON.parse(h.body) as { employer: { name: string }; position: string });
  /** Requests about the employer `name` so far. */
  const calls = (name: string) => requests().filter((r) => r.employer.name === name).length;
  return {
    ...stub,
    url: stub.base,
    calls,
    /** Each request's `position`, in arrival order. */
    get positions() {
      return requests().map((r) => r.position);
    },
    get maxActive() {
      return stub.maxActive;
    },
  };
}

describe('the examples/ workflows, published and run through the API', () => {
  let e2e: E2E;
  let client: WeftClient;
  let verifier: Awaited<ReturnType<typeof verificationService>>;
  let files: string[];
  const published: Record<string, number | string> = {};

  beforeAll(async () => {
    e2e = await startE2E();
    verifier = await verificationService();
    ({ client } = await e2e.tenant('examples'));
    files = (await readdir('examples')).filter((f) => f.endsWith('.yaml')).sort();
    // Each under its file name, as `weft apply -f` does; payment first: order-with-payment calls it.
    for (const f of ['payment.yaml', ...files.filter((f) => f !== 'payment.yaml')]) {
      const definition = await readFile(`examples/${f}`, 'utf8');
      published[f] = await publish(client, f.replace(/\.yaml$/, ''), definition).catch((e: Error) => e.message); // reported by the first test
    }
  });
  afterAll(async () => {
    await verifier.close();
    await e2e.close();
  });

  it('publishes every examples/*.yaml: each one validates', () => {
    expect(files).toEqual(
      expect.arrayContaining(['compensate-on-error.yaml', 'employer-fanout.yaml', 'order-flow.yaml', 'order-with-payment.yaml', 'payment.yaml']),
    );
    expect(published).toEqual(Object.fromEntries(files.map((f) => [f, 1])));
  });

  describe('employer-fanout.yaml: one HTTP check per employer, merged by node-level reducers', () => {
    const config = () => ({ verify_url: verifier.url });

    it('checks each employer at most two at a time and merges the deltas in element order, not completion order', async () => {
      verifier.reset();
      const employers = [{ name: 'Acme', note: 'part time' }, { name: 'Globex' }, { name: 'Initech', note: 'contract role' }];
      const run = await finished(client, await start(client, 'employer-fanout', { employers }, { config: config() }));

      expect(run.status).toBe('SUCCEEDED');
      const merged = {
        failures: 1,
        messages: ['Acme: part time', 'Globex: employment could not be verified', 'Initech: contract role'],
        checked: ['Acme', 'Globex', 'Initech'],
      };
      expect(node(run, 'check')).toMatchObject({ status: 'COMPLETED', output: merged });
      expect(iterations(run, 'check').map((t: any) => [t.iteration, t.status])).toEqual([
        [0, 'COMPLETED'],
        [1, 'COMPLETED'],
        [2, 'COMPLETED'],
      ]);
      expect(iterations(run, 'check')[2].output).toEqual({ failures: 0, messages: ['Initech: contract role'], checked: ['Initech'] });
      expect(run.output).toEqual({ status: 'needs_review', ...merged });

      // Acme (slow) held its slot while Globex and then Initech went through the other one.
      expect(verifier.positions.slice(0, 2).sort()).toEqual(['1 of 3', '2 of 3']);
      expect(verifier.positions[2]).toBe('3 of 3');
      expect(verifier.maxActive).toBe(2);
    });

    it('retries one iteration on its own: a 503 from the service costs that employer a second attempt', async () => {
      verifier.reset();
      const run = await finished(client, await start(client, 'employer-fanout', { employers: [{ name: 'Initech' }, { name: 'Hooli' }] }, { config: config() }));
      expect(run.status).toBe('SUCCEEDED');
      expect(iterations(run, 'check').map((t: any) => t.attempt)).toEqual([0, 1]);
      expect(verifier.calls('Initech')).toBe(1);
      expect(verifier.calls('Hooli')).toBe(2);
      expect(run.output).toEqual({ status: 'verified', failures: 0, messages: [], checked: ['Initech', 'Hooli'] });
    });

    it('decides at once on an empty list: no iteration, no call, an empty merge', async () => {
      verifier.reset();
      const run = await finished(client, await start(client, 'employer-fanout', { employers: [] }, { config: config() }));
      expect(run.status).toBe('SUCCEEDED');
      expect(node(run, 'check')).toMatchObject({ status: 'COMPLETED', output: {} });
      expect(iterations(run, 'check')).toEqual([]);
      expect(verifier.positions).toEqual([]);
      expect(run.output).toEqual({ status: 'verified', failures: 0, messages: [], checked: [] });
    });
  });

  describe('order-with-payment.yaml calling payment.yaml as a SUBWORKFLOW', () => {
    it('pays a small order in a child run and ships it with the payment the child returned', async () => {
      const run = await finished(client, await start(client, 'order-with-payment', { order_id: '1001' }, { config: { shop_url: e2e.shop.url } }));

      expect(run.status).toBe('SUCCEEDED');
      expect(run.tasks.map((t: any) => [t.nodeId, t.status])).toEqual(
        expect.arrayContaining([
          ['fetch_order', 'COMPLETED'],
          ['pay', 'COMPLETED'],
          ['ship', 'COMPLETED'],
        ]),
      );
      expect(run.children).toHaveLength(1);
      const [child] = run.children;
      expect(child).toMatchObject({
        status: 'SUCCEEDED',
        workflowId: 'payment',
        parentRunId: run.id,
        parentTaskId: node(run, 'pay').id,
        depth: 1,
        input: { order_id: '1001', amount: 250 },
        output: { status: 'paid', payment_id: 'pay-1001', amount: 250 },
      });
      expect(node(run, 'pay').output).toEqual(child.output);
      expect(run.output).toEqual({ shipped: true, order_id: '1001', payment_id: 'pay-1001' });
      expect(run).toMatchObject({ parentRunId: null, depth: 0 });
    });

    it('fails the order when the payment is declined, naming the child run and its reason', async () => {
      const run = await finished(client, await start(client, 'order-with-payment', { order_id: '2001' }, { config: { shop_url: e2e.shop.url } }));

      expect(run.status).toBe('FAILED');
      expect(run.children).toHaveLength(1);
      const child = await read(client, run.children[0].id);
      expect(child.status).toBe('FAILED');
      expect(node(child, 'authorize')).toMatchObject({ status: 'FAILED', error: expect.stringContaining('card declined: 4200 over the limit of 1000') });
      expect(node(child, 'capture')).toBeUndefined();
      expect(node(run, 'pay').status).toBe('FAILED');
      expect(node(run, 'pay').error).toContain(`child run ${child.id} failed`);
      expect(node(run, 'pay').error).toContain(child.error);
      expect(node(run, 'ship')).toBeUndefined();
    });

    it('runs payment.yaml on its own too, with its run output', async () => {
      const run = await finished(client, await start(client, 'payment', { order_id: 'solo', amount: 40 }));
      expect(run).toMatchObject({ status: 'SUCCEEDED', depth: 0, parentRunId: null, children: [] });
      expect(run.output).toEqual({ status: 'paid', payment_id: 'pay-solo', amount: 40 });
    });
  });

  describe('compensate-on-error.yaml: an error edge that undoes the reservation', () => {
    it('releases the stock when the charge is declined for good, and the run still succeeds', async () => {
      const run = await finished(client, await start(client, 'compensate-on-error', { order_id: 'C3', amount: 700 }));
      expect(run.status).toBe('SUCCEEDED');
      expect(run.tasks.map((t: any) => [t.nodeId, t.status]).sort()).toEqual([
        ['charge', 'FAILED'],
        ['release_stock', 'COMPLETED'],
        ['reserve_stock', 'COMPLETED'],
        ['ship', 'SKIPPED'],
      ]);
      // A decline is not retried: one attempt.
      expect(node(run, 'charge').attempt).toBe(0);
      expect(node(run, 'release_stock').output).toEqual({ released: 'res-C3', because: node(run, 'charge').error });
      expect(node(run, 'charge').error).toContain('card declined: amount 700 over the limit');
    });

    it('ships and skips the compensation when the charge goes through', async () => {
      const run = await finished(client, await start(client, 'compensate-on-error', { order_id: 'D4', amount: 120 }));
      expect(run.status).toBe('SUCCEEDED');
      expect(node(run, 'release_stock').status).toBe('SKIPPED');
      expect(node(run, 'ship').output).toEqual({ shipped: true, reservation: 'res-D4' });
    });
  });

  it('order-flow.yaml ships a small order without waiting for approval', async () => {
    const run = await finished(client, await start(client, 'order-flow', { order_id: '1002' }, { config: { shop_url: e2e.shop.url } }));
    expect(run.status).toBe('SUCCEEDED');
    expect(node(run, 'approval').status).toBe('SKIPPED');
    expect(node(run, 'ship').output).toEqual({ shipped: true, order: { order_id: '1002', total: 250, items: ['pallet'] } });
  });
});
