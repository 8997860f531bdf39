import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { TaskJob } from '@weft/engine';
import { BullTaskQueues, bullQueueName, queuePrefix } from '@weft/platform';
import { keySlot } from '../support/redis-slot.js';

/**
 * Bull's keys are ready for Redis Cluster: every key of one queue — waiting, delayed and active
 * lists, the job hashes, their locks, the id counter — carries the queue's hash tag, so a
 * cluster keeps a queue on one slot (Bull's scripts need that) and different queues on
 * different slots. Checked on the single local Redis by listing the keys a real producer and
 * consumer wrote and computing each one's cluster slot.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const db = `weft_tags_${randomBytes(4).toString('hex')}`;
const prefix = queuePrefix(`postgres://weft_app@127.0.0.1:5432/${db}`);
let redis: Redis;
let queues: BullTaskQueues;

const job = (queue: string, taskId: string, notBefore = 0): TaskJob => ({
  tenantId: 't',
  runId: 'r',
  taskId,
  nodeId: 'n',
  nodeType: 'HTTP',
  attempt: 0,
  queue,
  input: {},
  notBefore,
});

async function keys(): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of redis.scanStream({ match: `${prefix}:*`, count: 1000 })) out.push(...(batch as string[]));
  return out.sort();
}

beforeAll(() => {
  redis = new Redis(REDIS_URL);
  queues = new BullTaskQueues(REDIS_URL, prefix, { onError: () => undefined });
});
afterAll(async () => {
  await queues.close();
  const left = await keys();
  if (left.length) await redis.del(...left);
  redis.disconnect();
});

describe('Bull keys on Redis Cluster', () => {
  it('compute slots as a cluster does', () => {
    // The examples of Redis's own CLUSTER KEYSLOT documentation.
    expect(keySlot('somekey')).toBe(11058);
    expect(keySlot('foo{hash_tag}')).toBe(2515);
    expect(keySlot('weft:x:{http}:wait')).toBe(keySlot('http'));
  });

  it('name each queue by a hash tag, braces in names encoded so the tag stays whole', () => {
    expect(bullQueueName('http')).toBe('{http}');
    expect(bullQueueName('a}b{c')).toBe('{a%7Db%7Bc}');
    expect(queuePrefix('postgres://weft_app@db:5432/odd{name}')).toBe('weft:odd_name_');
  });

  it('keep every key of a queue on its slot and different queues on different slots', async () => {
    let release!: () => void;
    const running = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const taken = new Promise<void>((r) => (started = r));
    queues.consume(['http'], 1, async () => {
      started();
      await running;
    });
    await queues.enqueue([job('http', 'a'), job('http', 'b'), job('http', 'c', Date.now() + 60_000), job('python', 'd')]);
    await taken; // one http job is active and locked, one waits, one is delayed

    const written = await keys();
    const http = written.filter((k) => k.startsWith(`${prefix}:{http}:`));
    const python = written.filter((k) => k.startsWith(`${prefix}:{python}:`));
    expect(http.length + python.length).toBe(written.length);
    expect(http).toEqual(expect.arrayContaining(['a:0', 'a:0:lock', 'b:0', 'c:0', 'active', 'delayed', 'id', 'wait'].map((k) => `${prefix}:{http}:${k}`)));
    expect(python).toEqual(expect.arrayContaining([`${prefix}:{python}:d:0`, `${prefix}:{python}:wait`]));
    expect([...new Set(http.map(keySlot))]).toEqual([8915]);
    expect([...new Set(python.map(keySlot))]).toEqual([7252]);

    release();
  });
});
