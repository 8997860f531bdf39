import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './weft-config.js';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration, validated once at boot', () => {
  it('works on a developer machine with nothing set', () => {
    const c = loadConfig({});
    expect(c.databaseUrl).toBe('postgres://weft_app@127.0.0.1:5432/weft');
    expect(c.ownerDatabaseUrl).toBe('postgres://postgres@127.0.0.1:5432/weft');
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.port).toBe(4000);
    expect(c.queues).toEqual(['http', 'python', 'js']);
    expect(c.httpAllowPrivate).toBe(false);
  });

  it('reads queues, flags and numbers, and lets CLI overrides win', () => {
    const c = loadConfig({ WEFT_QUEUES: 'Http, partner,http', WEFT_HTTP_ALLOW_PRIVATE: 'yes', PORT: '8080' }, { PORT: 0 });
    expect(c.queues).toEqual(['http', 'partner']);
    expect(c.httpAllowPrivate).toBe(true);
    expect(c.port).toBe(0);
  });

  it('names each bad variable with the value given and one reason', () => {
    const msg = configError({ PORT: 'abc', WEFT_HTTP_ALLOW_PRIVATE: 'maybe', REDIS_URL: 'http://x', WEFT_WORKER_CONCURRENCY: '0' });
    expect(msg).toContain('PORT="abc": PORT must be an integer number');
    expect(msg).toContain('WEFT_HTTP_ALLOW_PRIVATE="maybe"');
    expect(msg).toContain('REDIS_URL="http://x": REDIS_URL must start with redis://');
    expect(msg).toContain('WEFT_WORKER_CONCURRENCY="0"');
    expect(msg.split('\n')).toHaveLength(5);
  });

  it('refuses out-of-range numbers', () => {
    expect(configError({ PORT: '70000' })).toContain('PORT must not be greater than 65535');
  });
});
