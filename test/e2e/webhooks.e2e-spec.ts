import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WeftClient } from '@weft/client';
import { WeftMetrics } from '@weft/platform';
import { jsNode, publish, rejection, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';

/** One request a receiver got: its headers and raw body. */
interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1 answering each request with the next of `statuses` (the last one repeated). */
async function receiver(statuses: number[], extraHeaders: Record<string, string> = {}): Promise<{ url: string; got: Received[]; server: Server }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(statuses[Math.min(got.length - 1, statuses.length - 1)]!, extraHeaders);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, server };
}

/** Verifies a `weft-signature` header as a receiver would: HMAC-SHA256(secret, "<t>.<raw body>"), compared in constant time. */
function verified(header: string, secret: string, body: string): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const expected = createHmac('sha256', secret).update(`${parts.t}.${body}`).digest();
  const given = Buffer.from(parts.v1 ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const DELIVERY_FIELDS = `id event runId status attempts lastStatusCode lastError createdAt nextAttemptAt deliveredAt`;

/** Webhooks end to end: created over GraphQL, enqueued by a run's end, sent by the scheduler to a receiver on loopback. */
describe('webhooks', () => {
  let e2e: E2E;
  let admin: WeftClient;
  const servers: Server[] = [];

  const create = async (c: WeftClient, url: string, events: string[]) =>
    (
      await c.request(`mutation($i: CreateWebhookInput!) { createWebhook(input: $i) { id url events secret createdAt } }`, {
        i: { url, events },
      })
    ).createWebhook;
  const deliveries = async (c: WeftClient, webhookId: string) =>
    (
      await c.request(`query($w: ID!) { webhookDeliveries(webhookId: $w) { edges { node { ${DELIVERY_FIELDS} } } } }`, { w: webhookId })
    ).webhookDeliveries.edges.map((e: { node: unknown }) => e.node);
  /** Polls `webhookId`'s deliveries until `done` holds for them (at most 20 s). */
  const waitDeliveries = async (c: WeftClient, webhookId: string, done: (ds: any[]) => boolean) => {
    for (const until = Date.now() + 20_000; ;) {
      const ds = await deliveries(c, webhookId);
      if (done(ds) || Date.now() > until) return ds;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_WEBHOOK_BACKOFF_MS: 20 });
    ({ client: admin } = await e2e.tenant('hooks'));
    await publish(admin, 'fails', { nodes: [jsNode('boom', 'throw new Error("boom");')], edges: [] });
    await publish(admin, 'works', { nodes: [jsNode('ok', 'return {done: true};')], edges: [] });
  });
  afterAll(async () => {
    for (const s of servers) s.close();
    await e2e?.close();
  });

  it('retries a failed run’s delivery until the receiver takes it, signed, with one delivery id', async () => {
    const r = await receiver([500, 500, 200]);
    servers.push(r.server);
    const hook = await create(admin, r.url, ['RUN_FAILED', 'RUN_FAILED']);
    expect(hook).toMatchObject({ url: r.url, events: ['RUN_FAILED'] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    // The secret is shown once: every other read has null.
    expect((await admin.request(`{ webhooks { id secret } }`)).webhooks).toEqual([{ id: hook.id, secret: null }]);

    const failed = await start(admin, 'fails', {}, { labels: { team: 'ops' } });
    const succeeded = await start(admin, 'works');
    await waitRun(admin, failed);
    await waitRun(admin, succeeded);
    const [d] = await waitDeliveries(admin, hook.id, (ds) => ds[0]?.status === 'DELIVERED');
    expect(d).toMatchObject({
      event: 'RUN_FAILED',
      runId: failed,
      status: 'DELIVERED',
      attempts: 3,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(d.deliveredAt).not.toBeNull();

    expect(r.got).toHaveLength(3);
    for (const got of r.got) {
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['weft-event']).toBe('run.failed');
      expect(got.headers['weft-delivery']).toBe(d.id);
      expect(verified(String(got.headers['weft-signature']), hook.secret, got.body)).toBe(true);
      // Another secret, or a changed body, does not verify.
      expect(verified(String(got.headers['weft-signature']), 'whsec_other', got.body)).toBe(false);
      expect(verified(String(got.headers['weft-signature']), hook.secret, got.body.replace('boom', 'bang'))).toBe(false);
    }
    const body = JSON.parse(r.got[2]!.body);
    expect(body).toEqual({
      id: d.id,
      event: 'run.failed',
      createdAt: expect.any(String),
      run: {
        id: failed,
        workflowId: 'fails',
        version: 1,
        status: 'FAILED',
        error: expect.stringContaining('boom'),
        labels: { team: 'ops' },
        finishedAt: expect.any(String),
      },
    });
    // Each attempt is counted by its outcome.
    const counted = await e2e.app.get(WeftMetrics).registry.getSingleMetric('weft_webhook_deliveries_total')!.get();
    const count = (outcome: string) => counted.values.find((v) => v.labels.event === 'run.failed' && v.labels.outcome === outcome)?.value;
    expect([count('retry'), count('delivered')]).toEqual([2, 1]);
    // The run that succeeded is not an event this webhook subscribed to: no delivery for it.
    expect((await deliveries(admin, hook.id)).map((x: { runId: string }) => x.runId)).toEqual([failed]);
    await admin.request(`mutation($id: ID!) { deleteWebhook(id: $id) }`, { id: hook.id });
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const target = await receiver([200]);
    const r = await receiver([302], { location: target.url });
    servers.push(r.server, target.server);
    const hook = await create(admin, r.url, ['RUN_SUCCEEDED']);
    await waitRun(admin, await start(admin, 'works'));
    const [d] = await waitDeliveries(admin, hook.id, (ds) => ds[0]?.attempts >= 2);
    expect(d).toMatchObject({ status: 'PENDING', lastStatusCode: 302, lastError: 'redirect 302 not followed' });
    expect(d.nextAttemptAt).not.toBeNull();
    expect(target.got).toEqual([]);
    await admin.request(`mutation($id: ID!) { deleteWebhook(id: $id) }`, { id: hook.id });
  });

  it('gives up after the 15th failed attempt: FAILED, with the last answer', async () => {
    const r = await receiver([500]);
    servers.push(r.server);
    const hook = await create(admin, r.url, ['RUN_FAILED']);
    await waitRun(admin, await start(admin, 'fails'));
    const [first] = await waitDeliveries(admin, hook.id, (ds) => ds[0]?.attempts >= 1);
    // Fourteen attempts made, as far as the sender can tell, and the next one due now: an attempt
    // in flight is not recorded (its count no longer matches), and the next one is the last.
    await e2e.owner.query(`UPDATE webhook_deliveries SET attempts = 14, next_attempt_at = now() WHERE id = $1`, [first.id]);
    const [d] = await waitDeliveries(admin, hook.id, (ds) => ds[0]?.status === 'FAILED');
    expect(d).toMatchObject({ status: 'FAILED', attempts: 15, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: null, deliveredAt: null });
    await admin.request(`mutation($id: ID!) { deleteWebhook(id: $id) }`, { id: hook.id });
  });

  it('refuses a url that is not http or https, and no events, naming the field', async () => {
    const ftp = await rejection(create(admin, 'ftp://127.0.0.1/x', ['RUN_FAILED']));
    expect([ftp.code, ftp.errors[0]!.message]).toEqual(['BAD_USER_INPUT', 'url: must be an http or https URL, not ftp']);
    const relative = await rejection(create(admin, '/hook', ['RUN_FAILED']));
    expect([relative.code, relative.errors[0]!.message]).toEqual(['BAD_USER_INPUT', 'url: "/hook" is not an absolute URL']);
    const long = await rejection(create(admin, `https://example.com/${'a'.repeat(2048)}`, ['RUN_FAILED']));
    expect([long.code, JSON.stringify(long.errors)]).toEqual(['BAD_USER_INPUT', expect.stringContaining('url must be at most 2048 characters')]);
    const none = await rejection(create(admin, 'https://example.com/hook', []));
    expect([none.code, JSON.stringify(none.errors)]).toEqual(['BAD_USER_INPUT', expect.stringContaining('events must name at least one event')]);
  });

  it('keeps one tenant’s webhooks from another', async () => {
    const hook = await create(admin, 'https://example.com/a', ['RUN_PAUSED']);
    const { client: other } = await e2e.tenant('other');
    expect((await other.request(`{ webhooks { id } }`)).webhooks).toEqual([]);
    expect((await rejection(other.request(`mutation($id: ID!) { deleteWebhook(id: $id) }`, { id: hook.id }))).code).toBe('NOT_FOUND');
    expect((await rejection(deliveries(other, hook.id))).code).toBe('NOT_FOUND');
    expect((await admin.request(`{ webhooks { id } }`)).webhooks).toContainEqual({ id: hook.id });
    await admin.request(`mutation($id: ID!) { deleteWebhook(id: $id) }`, { id: hook.id });
    expect((await rejection(admin.request(`mutation($id: ID!) { deleteWebhook(id: $id) }`, { id: hook.id }))).code).toBe('NOT_FOUND');
  });

  it('is for admins only', async () => {
    for (const role of ['operator', 'viewer']) {
      const { secret } = (await admin.request(`mutation($r: ApiKeyRole!) { createApiKey(input: {name: "w", role: $r}) { secret } }`, { r: role })).createApiKey;
      const c = new WeftClient(e2e.url, secret);
      const listErr = await rejection(c.request(`{ webhooks { id } }`));
      expect([listErr.code, listErr.errors[0]!.message]).toEqual(['FORBIDDEN', `The ${role} role may not list webhooks: webhooks needs the admin role`]);
      const createErr = await rejection(create(c, 'https://example.com/a', ['RUN_FAILED']));
      expect([createErr.code, createErr.errors[0]!.message]).toEqual([
        'FORBIDDEN',
        `The ${role} role may not manage webhooks: createWebhook needs the admin role`,
      ]);
      await c.close();
    }
  });
});
