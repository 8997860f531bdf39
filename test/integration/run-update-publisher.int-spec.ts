import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RunStatus, type RunUpdate } from '@weft/engine';
import { RUN_UPDATED_CHANNEL, RedisRunUpdatePublisher } from '@weft/platform';
import { freePort } from '../../chaos/processes.js';

/**
 * The run-update publisher on a real Redis: updates that do not end their run are gathered for
 * a short while and go out as one message, one per run (the latest); an update that ends its run
 * goes out at once with whatever was gathered; publish never waits for Redis.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let sub: Redis;
const received: { updates: RunUpdate[] }[] = [];
const tenantId = randomUUID();

beforeAll(async () => {
  sub = new Redis(REDIS_URL);
  sub.on('message', (_c: string, msg: string) => {
    // The channel is the machine's: other suites publish on it too, malformed messages included.
    let parsed: unknown;
    try {
      parsed = JSON.parse(msg);
    } catch {
      return;
    }
    if (!Array.isArray(parsed)) return;
    const updates = (parsed as RunUpdate[]).filter((u) => u?.tenantId === tenantId);
    if (updates.length) received.push({ updates });
  });
  await sub.subscribe(RUN_UPDATED_CHANNEL);
});
afterAll(() => sub?.disconnect());

/** Waits until `n` messages arrived, or 20 s passed (the expectations that follow then say what came). */
async function until(n: number, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; received.length < n && Date.now() < end;) await new Promise((r) => setTimeout(r, 5));
}

describe('the run-update publisher', () => {
  it('gathers updates that do not end their run into one message, the latest of each run', async () => {
    received.length = 0;
    // A gather window far longer than the four calls take, even on a loaded machine: one message
    // with all four shows they were gathered.
    const p = new RedisRunUpdatePublisher(REDIS_URL, undefined, 1_000);
    const [a, b] = [randomUUID(), randomUUID()];
    await p.publish({ tenantId, runId: a, status: RunStatus.Running, seq: 1 });
    await p.publish({ tenantId, runId: b, status: RunStatus.Running, seq: 4 });
    await p.publish({ tenantId, runId: a, status: RunStatus.Running, seq: 3 });
    await p.publish({ tenantId, runId: a, status: RunStatus.Running, seq: 2 }); // late: older than seq 3
    await until(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(received).toHaveLength(1);
    expect(received[0]!.updates).toEqual([
      { tenantId, runId: a, status: 'RUNNING', seq: 3 },
      { tenantId, runId: b, status: 'RUNNING', seq: 4 },
    ]);
    await p.close();
  });

  it('sends an update without a seq (an attempt admitted) unless an event of the run is gathered with it', async () => {
    received.length = 0;
    const p = new RedisRunUpdatePublisher(REDIS_URL, undefined, 1_000);
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await p.publish({ tenantId, runId: a, status: RunStatus.Running });
    await p.publish({ tenantId, runId: b, status: RunStatus.Running });
    await p.publish({ tenantId, runId: b, status: RunStatus.Running, seq: 6 });
    await p.publish({ tenantId, runId: c, status: RunStatus.Running, seq: 2 });
    await p.publish({ tenantId, runId: c, status: RunStatus.Running });
    await until(1);
    expect(received[0]!.updates).toEqual([
      { tenantId, runId: a, status: 'RUNNING' },
      { tenantId, runId: b, status: 'RUNNING', seq: 6 },
      { tenantId, runId: c, status: 'RUNNING', seq: 2 },
    ]);
    await p.close();
  });

  it('sends an update that ends its run at once, with what was gathered', async () => {
    received.length = 0;
    const p = new RedisRunUpdatePublisher(REDIS_URL, undefined, 600_000);
    const [a, b] = [randomUUID(), randomUUID()];
    await p.publish({ tenantId, runId: a, status: RunStatus.Running, seq: 5 });
    await p.publish({ tenantId, runId: b, status: RunStatus.Succeeded, seq: 9 });
    // The gathered update alone would wait 10 minutes, past the test's timeout: only the ending one sends it.
    await until(1);
    expect(received.map((r) => r.updates)).toEqual([
      [
        { tenantId, runId: a, status: 'RUNNING', seq: 5 },
        { tenantId, runId: b, status: 'SUCCEEDED', seq: 9 },
      ],
    ]);
    await p.close();
  });

  it('sends what is gathered when it closes', async () => {
    received.length = 0;
    const p = new RedisRunUpdatePublisher(REDIS_URL, undefined, 60_000);
    const a = randomUUID();
    await p.publish({ tenantId, runId: a, status: RunStatus.Running, seq: 1 });
    await p.close();
    await until(1);
    expect(received.map((r) => r.updates)).toEqual([[{ tenantId, runId: a, status: 'RUNNING', seq: 1 }]]);
  });

  it('never waits for Redis: with nothing listening on the port, publish returns at once and the failure is reported', async () => {
    const errors: unknown[] = [];
    const p = new RedisRunUpdatePublisher('redis://127.0.0.1:1', (e) => errors.push(e), 10);
    // Returned at once: before the event loop's next turn, so without waiting for any socket.
    const first = await Promise.race([
      p.publish({ tenantId, runId: randomUUID(), status: RunStatus.Failed, seq: 2 }).then(() => 'publish returned'),
      new Promise((r) => setImmediate(() => r('the event loop turned'))),
    ]);
    expect(first).toBe('publish returned');
    for (const end = Date.now() + 30_000; errors.length === 0 && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
    expect(errors).toHaveLength(1);
    await p.close();
  });

  it('drops updates past 1,000 messages waiting for a Redis that stopped answering, and says so', async () => {
    const port = await freePort();
    const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const probe = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: null });
    const errors: string[] = [];
    const p = new RedisRunUpdatePublisher(`redis://127.0.0.1:${port}`, (e) => errors.push(String(e)), 10);
    try {
      await probe.ping();
      server.kill('SIGSTOP');
      for (let i = 0; i < 1_050; i++) await p.publish({ tenantId, runId: randomUUID(), status: RunStatus.Succeeded, seq: 1 });
      expect(errors).toHaveLength(50);
      expect(errors[0]).toContain('Redis has not answered 1000 run-update messages: 1 update(s) dropped');
      server.kill('SIGCONT');
    } finally {
      await p.close();
      probe.disconnect();
      server.kill('SIGCONT');
      server.kill('SIGKILL');
    }
  });
});
