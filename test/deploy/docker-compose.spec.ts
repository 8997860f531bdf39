import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/**
 * docker-compose.yml as Docker Compose would read it (YAML with merge keys), checked without a
 * container engine: the services and their order of start, the health checks, the roles' commands,
 * the database roles in each service's URLs, and that the files it mounts exist. The health
 * check one-liners are parsed as JavaScript, since the image runs them with `node -e`.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Service {
  image?: string;
  build?: string;
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
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
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
      expect({ name, image: services[name]!.image, build: services[name]!.build, init: services[name]!.init }).toEqual({ name, image: 'weft:local', build: '.', init: true });
    }
    expect(Object.fromEntries(WEFT.map((n) => [n, services[n]!.command]))).toEqual({ migrate: ['migrate'], api: ['api'], worker: ['worker'], scheduler: ['scheduler'] });
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

  it('checks health with pg_isready, redis-cli ping and GET /readyz on each server’s own port', () => {
    const tests = Object.fromEntries(Object.entries(services).map(([n, s]) => [n, s.healthcheck?.test]));
    const readyz = (port: number) => ['CMD', 'node', '-e', `fetch('http://127.0.0.1:${port}/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`];
    expect(tests).toEqual({
      postgres: ['CMD', 'pg_isready', '-U', 'postgres', '-d', 'weft', '-h', '127.0.0.1'],
      redis: ['CMD', 'redis-cli', 'ping'],
      migrate: undefined,
      api: readyz(4000),
      worker: readyz(9464),
      scheduler: readyz(9464),
    });
    for (const name of SERVERS) {
      expect(() => new Function(services[name]!.healthcheck!.test[3]!)).not.toThrow();
      expect(services[name]!.environment!.WEFT_METRICS_PORT).toBe('9464');
    }
    expect(services.api!.environment!.PORT).toBe('4000');
  });

  it('gives the owner’s password to the migration only; every server connects as weft_app', () => {
    const runtime = pgUrl(services.api!.environment!.DATABASE_URL);
    expect(runtime).toEqual({ user: 'weft_app', password: '${WEFT_APP_PASSWORD:-weft-app-local}', host: 'postgres', db: 'weft' });
    for (const name of WEFT) expect(pgUrl(services[name]!.environment!.DATABASE_URL)).toEqual(runtime);
    for (const name of SERVERS) expect(pgUrl(services[name]!.environment!.DATABASE_OWNER_URL)).toEqual(runtime);
    expect(pgUrl(services.migrate!.environment!.DATABASE_OWNER_URL)).toEqual({
      user: 'postgres',
      password: '${WEFT_POSTGRES_PASSWORD:-postgres-local}',
      host: 'postgres',
      db: 'weft',
    });
    expect(services.postgres!.environment).toEqual({
      POSTGRES_USER: 'postgres',
      POSTGRES_PASSWORD: '${WEFT_POSTGRES_PASSWORD:-postgres-local}',
      POSTGRES_DB: 'weft',
      WEFT_APP_PASSWORD: '${WEFT_APP_PASSWORD:-weft-app-local}',
    });
    for (const name of WEFT) expect(services[name]!.environment!.REDIS_URL).toBe('redis://redis:6379');
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
