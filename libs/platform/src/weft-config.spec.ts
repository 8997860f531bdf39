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

  it('takes queue names as definitions give them, and refuses a name with white space inside', () => {
    expect(loadConfig({ WEFT_QUEUES: ' GPU ,http,' }).queues).toEqual(['gpu', 'http']);
    for (const bad of ['gpu queue', 'http, -lead', `${'q'.repeat(65)}`]) {
      expect(configError({ WEFT_QUEUES: bad })).toContain(`WEFT_QUEUES=${JSON.stringify(bad)}: WEFT_QUEUES must be a comma-separated list of queue names`);
    }
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

describe('graphql-ws and signal-buffer limits', () => {
  it('have documented defaults', () => {
    const c = loadConfig({});
    expect(c.wsMaxConnections).toBe(1000);
    expect(c.wsMaxConnectionsPerKey).toBe(100);
    expect(c.wsMaxPendingPerAddress).toBe(16);
    expect(c.maxBufferedSignals).toBe(1000);
    expect(c.maxBufferedSignalBytes).toBe(16 * 1024 * 1024);
  });

  it('are read from the environment and refused at boot when not a positive integer', () => {
    const c = loadConfig({
      WEFT_WS_MAX_CONNECTIONS: '5',
      WEFT_WS_MAX_CONNECTIONS_PER_KEY: '2',
      WEFT_WS_MAX_PENDING_PER_ADDRESS: '7',
      WEFT_MAX_BUFFERED_SIGNALS: '3',
      WEFT_MAX_BUFFERED_SIGNAL_BYTES: '4096',
    });
    expect([c.wsMaxConnections, c.wsMaxConnectionsPerKey, c.wsMaxPendingPerAddress, c.maxBufferedSignals, c.maxBufferedSignalBytes]).toEqual([
      5, 2, 7, 3, 4096,
    ]);
    const msg = configError({
      WEFT_WS_MAX_CONNECTIONS: '0',
      WEFT_WS_MAX_CONNECTIONS_PER_KEY: 'many',
      WEFT_WS_MAX_PENDING_PER_ADDRESS: '0',
      WEFT_MAX_BUFFERED_SIGNALS: '-1',
      WEFT_MAX_BUFFERED_SIGNAL_BYTES: '1.5',
    });
    expect(msg).toContain('WEFT_WS_MAX_CONNECTIONS="0"');
    expect(msg).toContain('WEFT_WS_MAX_CONNECTIONS_PER_KEY="many"');
    expect(msg).toContain('WEFT_WS_MAX_PENDING_PER_ADDRESS="0"');
    expect(msg).toContain('WEFT_MAX_BUFFERED_SIGNALS="-1"');
    expect(msg).toContain('WEFT_MAX_BUFFERED_SIGNAL_BYTES="1.5"');
  });
});

describe('graphql-ws connections per tenant and API keys per tenant', () => {
  it('default to 200 connections (at most half the process cap) and 100 live keys', () => {
    expect(loadConfig({})).toMatchObject({ wsMaxConnectionsPerTenant: 200, maxKeysPerTenant: 100 });
    expect(loadConfig({ WEFT_WS_MAX_CONNECTIONS: '100' }).wsMaxConnectionsPerTenant).toBe(50);
    expect(loadConfig({ WEFT_WS_MAX_CONNECTIONS: '1' }).wsMaxConnectionsPerTenant).toBe(1);
    expect(loadConfig({ WEFT_WS_MAX_CONNECTIONS_PER_TENANT: '999', WEFT_MAX_KEYS_PER_TENANT: '7' })).toMatchObject({
      wsMaxConnectionsPerTenant: 999,
      maxKeysPerTenant: 7,
    });
  });

  it('refuse at boot a per-tenant cap that is not below the process cap, naming both', () => {
    const msg = configError({ WEFT_WS_MAX_CONNECTIONS: '50', WEFT_WS_MAX_CONNECTIONS_PER_TENANT: '50' });
    expect(msg).toContain('WEFT_WS_MAX_CONNECTIONS_PER_TENANT="50": must be below WEFT_WS_MAX_CONNECTIONS (50)');
    expect(configError({ WEFT_WS_MAX_CONNECTIONS_PER_TENANT: '1000' })).toContain('must be below WEFT_WS_MAX_CONNECTIONS (1000)');
    expect(configError({ WEFT_WS_MAX_CONNECTIONS_PER_TENANT: '0', WEFT_MAX_KEYS_PER_TENANT: 'lots' })).toMatch(
      /WEFT_WS_MAX_CONNECTIONS_PER_TENANT="0"[^]*WEFT_MAX_KEYS_PER_TENANT="lots"/,
    );
  });
});

describe('CODE settings', () => {
  it('leave WEFT_CODE_UNCONFINED unset (so weft dev can default it) unless given, and cap processes', () => {
    expect(loadConfig({})).toMatchObject({ codeUnconfined: undefined, codeMaxProcesses: 128, codeMaxTotalMb: undefined });
    expect(loadConfig({ WEFT_CODE_MAX_TOTAL_MB: '256' })).toMatchObject({ codeMaxTotalMb: 256 });
    expect(configError({ WEFT_CODE_MAX_TOTAL_MB: 'half' })).toMatch(/WEFT_CODE_MAX_TOTAL_MB="half".*whole number of MiB/);
    expect(configError({ WEFT_CODE_MAX_TOTAL_MB: '8' })).toMatch(/WEFT_CODE_MAX_TOTAL_MB="8"/);
    expect(loadConfig({ WEFT_CODE_UNCONFINED: '0', WEFT_CODE_MAX_PROCESSES: '64' })).toMatchObject({ codeUnconfined: false, codeMaxProcesses: 64 });
    expect(loadConfig({ WEFT_CODE_UNCONFINED: 'yes' }).codeUnconfined).toBe(true);
    expect(configError({ WEFT_CODE_UNCONFINED: 'maybe', WEFT_CODE_MAX_PROCESSES: '4' })).toMatch(
      /WEFT_CODE_UNCONFINED="maybe".*\n.*WEFT_CODE_MAX_PROCESSES="4"/,
    );
  });
});

describe('ops settings', () => {
  it('keep the ops listener off by default and on loopback, and budget workflow labels per tenant', () => {
    const c = loadConfig({});
    expect([c.metricsPort, c.metricsHost, c.metricsWorkflowsPerTenant, c.metricsMaxWorkflows]).toEqual([undefined, '127.0.0.1', 20, 200]);
    const set = loadConfig({
      WEFT_METRICS_PORT: '9464',
      WEFT_METRICS_HOST: '0.0.0.0',
      WEFT_METRICS_WORKFLOWS_PER_TENANT: '5',
      WEFT_METRICS_MAX_WORKFLOWS: '50',
    });
    expect([set.metricsPort, set.metricsHost, set.metricsWorkflowsPerTenant, set.metricsMaxWorkflows]).toEqual([9464, '0.0.0.0', 5, 50]);
    expect(configError({ WEFT_METRICS_WORKFLOWS_PER_TENANT: '0' })).toContain('WEFT_METRICS_WORKFLOWS_PER_TENANT must not be less than 1');
  });

  it('take a Redis URL that carries a password, as docker-compose.yml gives it', () => {
    expect(loadConfig({ REDIS_URL: 'redis://:s3cret-pw@redis:6379' }).redisUrl).toBe('redis://:s3cret-pw@redis:6379');
    expect(loadConfig({ REDIS_URL: 'rediss://weft:s3cret-pw@redis.internal:6380/2' }).redisUrl).toBe('rediss://weft:s3cret-pw@redis.internal:6380/2');
  });
});

describe('the bound on one GraphQL answer', () => {
  it('defaults to 64 MiB of stored JSON and is refused at boot below 1 KiB or when not an integer', () => {
    expect(loadConfig({}).maxResponseBytes).toBe(64 * 1024 * 1024);
    expect(loadConfig({ WEFT_MAX_RESPONSE_BYTES: '1048576' }).maxResponseBytes).toBe(1024 * 1024);
    expect(configError({ WEFT_MAX_RESPONSE_BYTES: '100' })).toContain('WEFT_MAX_RESPONSE_BYTES="100"');
    expect(configError({ WEFT_MAX_RESPONSE_BYTES: 'lots' })).toContain('WEFT_MAX_RESPONSE_BYTES="lots"');
  });
});
