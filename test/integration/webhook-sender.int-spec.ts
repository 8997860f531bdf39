import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookRepository } from '@weft/persistence';
import { v7 as uuidv7 } from 'uuid';
import { WebhookSender } from '../../apps/scheduler/src/webhooks/webhook-sender.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant } from '../support/builders.js';

/**
 * The scheduler's webhook sender on real PostgreSQL, against receivers on 127.0.0.1: how many
 * times a delivery is sent when two senders share the deliveries, and which addresses the
 * address guard refuses when private ones are not allowed.
 */

let db: TestDatabase;
let tenantId: string;
const servers: Server[] = [];
const senders: WebhookSender[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  ({ tenantId } = await createTenant(db.ds));
});
afterAll(async () => {
  for (const s of senders) await s.close();
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
  await db?.drop();
});

/** A receiver that notes each request's delivery id and never answers. */
async function silentReceiver(): Promise<{ url: string; got: string[] }> {
  const got: string[] = [];
  const server = createServer((req) => {
    got.push(String(req.headers['weft-delivery']));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

/** A webhook of the tenant at `url` with `count` PENDING deliveries due now; their ids. */
async function dueDeliveries(url: string, count: number): Promise<{ webhookId: string; ids: string[] }> {
  const hook = await new WebhookRepository(db.ds).create(tenantId, { id: uuidv7(), url, events: ['run.failed'], secret: 'whsec_test' });
  const ids = Array.from({ length: count }, () => uuidv7());
  await db.owner.query(
    `INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event, run_id, run_seq, run, created_at, next_attempt_at)
     SELECT $1, d.id, $2, 'run.failed', gen_random_uuid(), 1, '{"status": "FAILED"}', now(), now() FROM unnest($3::uuid[]) AS d(id)`,
    [tenantId, hook.id, ids],
  );
  return { webhookId: hook.id, ids };
}

const sender = (opts: ConstructorParameters<typeof WebhookSender>[1]) => {
  const s = new WebhookSender(db.ds, opts);
  senders.push(s);
  return s;
};

describe('the webhook sender', () => {
  it('sends each claimed delivery once per attempt, even when a second sender polls while the first is slow', async () => {
    const r = await silentReceiver();
    const { webhookId, ids } = await dueDeliveries(r.url, 30);
    // Each attempt times out; a failed one is due again only much later.
    const first = sender({ allowPrivate: true, timeoutMs: 300, backoffMs: 600_000 });
    const second = sender({ allowPrivate: true, timeoutMs: 300, backoffMs: 600_000 });
    let done = false;
    const sending = first.sendDue().finally(() => (done = true));
    while (!done) {
      await second.sendDue();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await sending;
    const rows: { id: string; attempts: number; last_error: string }[] = await db.owner.query(
      `SELECT id, attempts, last_error FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2`,
      [tenantId, webhookId],
    );
    expect(rows.map((d) => [d.attempts, d.last_error])).toEqual(ids.map(() => [1, 'timed out']));
    // One request per recorded attempt: no delivery was sent by both senders.
    expect([...r.got].sort()).toEqual([...ids].sort());
  });

  it('refuses loopback and unspecified addresses however they are spelt when private ones are not allowed', async () => {
    const r = await silentReceiver();
    const port = new URL(r.url).port;
    const urls = ['127.0.0.1', '[::1]', '0.0.0.0', '2130706433', '0x7f.1', '127.1', 'localhost', '[::ffff:127.0.0.1]', '[::]'].map(
      (host) => `http://${host}:${port}/hook`,
    );
    const hooks = await Promise.all(urls.map((url) => dueDeliveries(url, 1)));
    await sender({ allowPrivate: false, timeoutMs: 2_000, backoffMs: 600_000 }).sendDue();
    const rows: { webhook_id: string; attempts: number; last_error: string }[] = await db.owner.query(
      `SELECT webhook_id, attempts, last_error FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = ANY($2::uuid[])`,
      [tenantId, hooks.map((h) => h.webhookId)],
    );
    expect(rows).toHaveLength(urls.length);
    for (const row of rows) {
      expect([row.attempts, row.last_error]).toEqual([
        1,
        expect.stringMatching(/refused to connect to .*(loopback|unspecified) address.*the scheduler allows only public/),
      ]);
    }
    expect(r.got).toEqual([]);
  });
});
