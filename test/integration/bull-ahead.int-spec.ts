import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { TaskJob } from '@weft/engine';
import { BullTaskQueues, queuePrefix } from '@weft/platform';

/**
 * Jobs fair dispatch enqueues ahead (a tenant back from idle) are taken before the jobs already
 * waiting on their queue, in the order they were enqueued among themselves. Real Redis, under a
 * prefix of this suite's own, consumed by a real Bull consumer.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = queuePrefix(`postgres://weft_app@127.0.0.1:5432/weft_ahead_${randomBytes(4).toString('hex')}`);
let redis: Redis;
let queues: BullTaskQueues;

const job = (taskId: string): TaskJob => ({
  tenantId: 't',
  runId: 'r',
  taskId,
  nodeId: 'n',
  nodeType: 'HTTP',
  attempt: 0,
  queue: 'ahead',
  input: {},
  notBefore: 0,
});

beforeAll(() => {
  redis = new Redis(REDIS_URL);
  queues = new BullTaskQueues(REDIS_URL, prefix, { onError: () => undefined });
});
afterAll(async () => {
  await queues.close();
  const left: string[] = [];
  for await (const batch of redis.scanStream({ match: `${prefix}:*`, count: 1000 })) left.push(...(batch as string[]));
  if (left.length) await redis.del(...left);
  redis.disconnect();
});

describe('jobs enqueued ahead', () => {
  it('are taken before the waiting ones, first enqueued first', async () => {
    await queues.enqueue([job('w1'), job('w2'), job('w3')]);
    await queues.enqueue([job('a1')], new Date(), { ahead: true });
    await queues.enqueue([job('w4')]);
    await queues.enqueue([job('a2')], new Date(), { ahead: true });
    const taken: string[] = [];
    const all = new Promise<void>((resolve) => {
      queues.consume(['ahead'], 1, async (j: TaskJob) => {
        taken.push(j.taskId);
        if (taken.length === 6) resolve();
      });
    });
    await all;
    expect(taken).toEqual(['a1', 'a2', 'w1', 'w2', 'w3', 'w4']);
  });
});
