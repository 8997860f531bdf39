import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { BullTaskQueues, ensureRedis, loadConfig } from '@weft/platform';
import { freePort, waitForPort } from '../support/net.js';

/**
 * A Redis that requires a password (`requirepass`, as docker-compose.yml runs it): the URL of
 * REDIS_URL carries it (`redis://:password@host:port`), the boot check and the queues'
 * connections authenticate with it, and a URL without it is refused without the password in
 * the message.
 */

const PASSWORD = 'c0mp0se-redis-pw';

describe('Redis with a password', () => {
  let redis: ChildProcess;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--requirepass', PASSWORD], {
      stdio: 'ignore',
    });
    await waitForPort(port);
  });
  afterAll(() => {
    redis.kill('SIGKILL');
  });

  it('is reached with the password in REDIS_URL, by the boot check and the queues', async () => {
    const { redisUrl } = loadConfig({ REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${port}` });
    await ensureRedis(redisUrl);
    const queues = new BullTaskQueues(redisUrl, 'weft-redis-auth');
    try {
      await expect(queues.ping()).resolves.toBeUndefined();
    } finally {
      await queues.close();
    }
  });

  it('refuses a URL without it, and says so without printing a password', async () => {
    const err = await ensureRedis(`redis://127.0.0.1:${port}`).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/Cannot reach Redis at 127\.0\.0\.1:\d+ \(.*(NOAUTH|Authentication required).*\)/i);
    const wrong = await ensureRedis(`redis://:not-the-password@127.0.0.1:${port}`).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(wrong?.message).toMatch(/Cannot reach Redis/);
    expect(wrong?.message).not.toContain('not-the-password');
  });
});
