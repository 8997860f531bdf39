import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/**
 * docker-compose.yml as Docker Compose would read it (YAML with merge keys), checked without a
 * container engine: the services and their order of start, the health checks, the roles' commands,
 * the database roles in each service's URLs, the passwords it requires (no defaults), the one
 * port it publishes, and that the files it mounts exist. The health
 * check one-liners are parsed as JavaScript, since the image runs them with `node -e`.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Service {
  image?: string;
  build?: { context: string; args?: Record<string, string> };
  command?: string[];
  user?: string;
  privileged?: boolean;
  init?: boolean;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
  ports?: string[];
  restart?: string;
  stop_grace_period?: string;
}

const composeText = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = compose.services;
const WEFT = ['migrate', 'api', 'worker', 'scheduler'];
const SERVERS = ['api', 'worker', 'scheduler'];

/** `postgres://user:password@host:port/db` → its parts (the password as written, with its `${…}`). */
function pgUrl(url: string | undefined): { user: string; password: string; host: string; db: string } {
  const m = /^postgres:\/\/([^:@]+):(.+)@([^:/]+):5432\/(\w+)$/.exec(url ?? '');
  if (!m) throw new Error(`not a PostgreSQL URL with a password: ${url}`);
  return { user: m[1]!, password: m[2]!, host: m[3]!, db: m[4]! };
}

describe('docker-compose.yml', () => {
  it('runs PostgreSQL 16, Redis 7, a one-shot migration and each Weft role from the image of this repository', () => {
    expect(Object.keys(services)).toEqual(['postgres', 'redis', 'migrate', 'api', 'worker', 'scheduler']);
    expect(services.postgres!.image).toBe('postgres:16-bookworm');
    expect(services.redis!.image).toBe('redis:7-bookworm');
    for (const name of WEFT) {
      expect({ name, image: services[name]!.image, build: services[name]!.build, init: services[name]!.init }).toEqual({
        name,
        image: 'weft:local',
        build: { context: '.', args: { NODE_IMAGE: '${WEFT_NODE_IMAGE:-node:20.20-bookworm-slim}' } },
        init: true,
      });
    }
    expect(Object.fromEntries(WEFT.map((n) => [n, services[n]!.command]))).toEqual({
      migrate: ['migrate'],
      api: ['api'],
      worker: ['worker'],
      scheduler: ['scheduler'],
    });
    expect(services.migrate!.restart).toBe('no');
    expect(services.api!.ports).toEqual(['4000:4000']);
    expect(services.worker!.environment!.WEFT_QUEUES).toBe('all');
    expect(Object.keys(compose.volumes)).toEqual(['postgres-data']);
  });

  it('starts the migration once PostgreSQL is healthy, and the servers once it succeeded and Redis is healthy', () => {
    expect(services.migrate!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    for (const name of SERVERS) {
      expect({ name, depends: services[name]!.depends_on }).toEqual({
        name,
        depends: { migrate: { condition: 'service_completed_successfully' }, redis: { condition: 'service_healthy' } },
      });
    }
    expect(services.postgres!.depends_on).toBeUndefined();
    expect(services.redis!.depends_on).toBeUndefined();
  });

  it('checks health with pg_isready, an authenticated redis-cli ping and GET /readyz on each server’s ops listener', () => {
    const tests = Object.fromEntries(Object.entries(services).map(([n, s]) => [n, s.healthcheck?.test]));
    const readyz = ['CMD', 'node', '-e', `fetch('http://127.0.0.1:9464/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`];
    expect(tests).toEqual({
      postgres: ['CMD', 'pg_isready', '-U', 'postgres', '-d', 'weft', '-h', '127.0.0.1'],
      // Without the password redis-cli prints NOAUTH, so the check looks for PONG.
      redis: ['CMD-SHELL', 'redis-cli ping | grep -q PONG'],
      migrate: undefined,
      api: readyz,
      worker: readyz,
      scheduler: readyz,
    });
    for (const name of SERVERS) {
      expect(() => new Function(services[name]!.healthcheck!.test[3]!)).not.toThrow();
      expect(services[name]!.environment!.WEFT_METRICS_PORT).toBe('9464');
    }
    expect(services.api!.environment!.PORT).toBe('4000');
  });

  it('publishes the API’s port only: the ops listener (metrics, readiness) stays on the compose network', () => {
    expect(Object.fromEntries(Object.entries(services).map(([n, s]) => [n, s.ports]))).toEqual({
      postgres: undefined,
      redis: undefined,
      migrate: undefined,
      api: ['4000:4000'],
      worker: undefined,
      scheduler: undefined,
    });
    for (const name of SERVERS) expect(services[name]!.environment!.WEFT_METRICS_HOST).toBe('0.0.0.0');
  });

  it('refuses to start without each password instead of falling back to a well-known one', () => {
    // Every ${…} naming a password is ${VAR:?message}: Compose stops with the message when VAR is unset or empty.
    const uses = [...composeText.matchAll(/\$\{(WEFT_\w*PASSWORD)([^}]*)\}/g)];
    expect(new Set(uses.map((m) => m[1]))).toEqual(new Set(['WEFT_POSTGRES_PASSWORD', 'WEFT_APP_PASSWORD', 'WEFT_REDIS_PASSWORD']));
    for (const [, name, rest] of uses) expect(rest).toMatch(new RegExp(`^:\\?set ${name} \\(.+\\) in the environment or \\.env$`));
    expect(composeText).not.toMatch(/:-[\w-]*local\}/);
  });

  it('runs Redis with a password that every Weft service’s REDIS_URL carries', () => {
    const password = '${WEFT_REDIS_PASSWORD:?set WEFT_REDIS_PASSWORD (Redis requirepass) in the environment or .env}';
    expect(services.redis!.environment).toEqual({ REDISCLI_AUTH: password });
    expect(services.redis!.command).toEqual(['sh', '-c', `exec docker-entrypoint.sh redis-server --save '' --appendonly no --requirepass "$$REDISCLI_AUTH"`]);
    for (const name of WEFT) expect(services[name]!.environment!.REDIS_URL).toBe(`redis://:${password}@redis:6379`);
  });

  it('gives a stopping worker longer than its drain (WEFT_DRAIN_SECONDS, 25 s by default) before Docker kills it', () => {
    const grace = /^(\d+)s$/.exec(services.worker!.stop_grace_period ?? '');
    const drain = Number(services.worker!.environment?.WEFT_DRAIN_SECONDS ?? 25);
    expect(grace).not.toBeNull();
    expect(Number(grace![1])).toBeGreaterThan(drain);
  });

  it('explains next to the worker why it runs as root and privileged, and the alternative', () => {
    const worker = composeText.slice(composeText.indexOf('\n  worker:'), composeText.indexOf('\n  scheduler:'));
    expect(worker).toMatch(/bubblewrap/);
    expect(worker).toMatch(/CAP_SYS_ADMIN/);
    expect(worker).toMatch(/cgroup/);
    expect(worker).toMatch(/hosts \(or VMs\) of their own/);
  });

  it('gives the owner’s password to the migration only; every server connects as weft_app', () => {
    const APP = "${WEFT_APP_PASSWORD:?set WEFT_APP_PASSWORD (the runtime role weft_app's password) in the environment or .env}";
    const OWNER = "${WEFT_POSTGRES_PASSWORD:?set WEFT_POSTGRES_PASSWORD (the PostgreSQL owner's password) in the environment or .env}";
    const runtime = pgUrl(services.api!.environment!.DATABASE_URL);
    expect(runtime).toEqual({ user: 'weft_app', password: APP, host: 'postgres', db: 'weft' });
    for (const name of WEFT) expect(pgUrl(services[name]!.environment!.DATABASE_URL)).toEqual(runtime);
    for (const name of SERVERS) expect(pgUrl(services[name]!.environment!.DATABASE_OWNER_URL)).toEqual(runtime);
    expect(pgUrl(services.migrate!.environment!.DATABASE_OWNER_URL)).toEqual({
      user: 'postgres',
      password: OWNER,
      host: 'postgres',
      db: 'weft',
    });
    expect(services.postgres!.environment).toEqual({ POSTGRES_USER: 'postgres', POSTGRES_PASSWORD: OWNER, POSTGRES_DB: 'weft', WEFT_APP_PASSWORD: APP });
  });

  it('mounts the role script into the image’s init folder, executable, and runs only the worker as root', () => {
    const mount = services.postgres!.volumes!.find((v) => v.includes('docker-entrypoint-initdb.d'))!;
    const [host, container, mode] = mount.split(':');
    expect([container, mode]).toEqual(['/docker-entrypoint-initdb.d/10-weft-app-role.sh', 'ro']);
    const script = join(ROOT, host!);
    expect(existsSync(script)).toBe(true);
    expect(statSync(script).mode & 0o111).toBe(0o111);
    expect(readFileSync(script, 'utf8')).toMatch(/CREATE ROLE weft_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD :'pw';/);
    expect(Object.fromEntries(WEFT.map((n) => [n, [services[n]!.user, services[n]!.privileged]]))).toEqual({
      migrate: [undefined, undefined],
      api: [undefined, undefined],
      worker: ['0:0', true],
      scheduler: [undefined, undefined],
    });
  });
});
