import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import type { DataSource } from 'typeorm';
import { createDataSource, sql, withTenant } from '@weft/persistence';
import { RunCoordinator, type RunCoordinatorOptions } from '@weft/engine/coordinator';
import { BullTaskQueues, queuePrefix } from '@weft/platform';
import { startPlatform } from '@weft/cli';
import { MemoryLogger, RecordingDispatcher, RecordingPublisher } from './builders.js';
import { testConfig } from './e2e-platform.js';

/**
 * Faults for the durability suites: triggers that play a failing PostgreSQL (a refused statement,
 * a transaction that hangs until it is killed, a window of failures), a killer of backends, a
 * counting HTTP stub, separate "replicas" (own pool, own coordinator) and small waiting helpers.
 * Triggers are created as the tables' owner (the superuser of the test database); the runtime
 * role only ever meets their effects.
 */

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `probe` until it returns a truthy value (returned), or throws after `timeoutMs` naming `what`.
 * The default, 30 s, is room for a loaded machine: a state that comes costs only the time it takes.
 */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/**
 * Takes the session-level advisory lock `key` on a connection of its own (as the owner) until
 * `release()`: transactions waiting in {@link act.waitForLock} go on once it is released.
 */
export async function holdLock(owner: DataSource, key: number): Promise<{ release(): Promise<void> }> {
  const runner = owner.createQueryRunner();
  await runner.connect();
  await runner.query('SELECT pg_advisory_lock($1)', [key]);
  return {
    async release() {
      try {
        await runner.query('SELECT pg_advisory_unlock($1)', [key]);
      } finally {
        await runner.release();
      }
    },
  };
}

/** A fault installed by {@link installFault}. */
export interface Fault {
  /** How many rows matched `when` so far (also those beyond `times`, and in transactions that rolled back). */
  hits(): Promise<number>;
  /** With `forMs`: the end of its window on the database's clock (`timestamptz` text). */
  until?: string;
  remove(): Promise<void>;
}

/** What a fault does to a matching row. */
export const act = {
  /** Fails the statement with SQLSTATE `code` (e.g. `40001`, a serialization failure). */
  raise: (code: string, message = `injected fault ${code}`) => `RAISE EXCEPTION '${message.replace(/'/g, "''")}' USING ERRCODE = '${code}';`,
  /**
   * Holds the transaction open until the advisory lock `key` is free: the test holds it (see
   * {@link holdLock}) and lets the transaction go on when it has seen what it needs to.
   */
  waitForLock: (key: number) => `PERFORM pg_advisory_xact_lock_shared(${Math.trunc(key)});`,
  /** Holds the transaction open for `seconds` (so a {@link backendKiller} can terminate it). */
  sleep: (seconds: number) => `PERFORM pg_sleep(${seconds});`,
};

let faultSeq = 0;

/**
 * Installs a row trigger (`timing` BEFORE, `events` e.g. `INSERT` or `INSERT OR UPDATE`) on `table`
 * that runs `action` (see {@link act}) for rows matching `when` — a SQL condition over `NEW` —
 * the first `times` times (default: always), or only while the database clock is within `forMs`
 * of installing it. Matches are counted in a sequence, so rolled-back attempts count too.
 */
export async function installFault(
  owner: DataSource,
  opts: { table: string; when: string; action: string; events?: string; times?: number; forMs?: number },
): Promise<Fault> {
  const name = `fault_${process.pid}_${++faultSeq}`;
  let window = 'true';
  let until: string | undefined;
  if (opts.forMs !== undefined) {
    const [row] = (await owner.query(`SELECT (clock_timestamp() + make_interval(secs => $1 / 1000.0))::text AS until`, [opts.forMs])) as { until: string }[];
    until = row!.until;
    window = `clock_timestamp() < '${until}'::timestamptz`;
  }
  const times = opts.times ?? 2_147_483_647;
  await owner.query(`
    CREATE SEQUENCE ${name}_hits;
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    BEGIN
      IF ${opts.when} THEN
        IF nextval('${name}_hits') <= ${times} AND ${window} THEN
          ${opts.action}
        END IF;
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER ${name} BEFORE ${opts.events ?? 'INSERT'} ON ${opts.table} FOR EACH ROW EXECUTE FUNCTION ${name}();
  `);
  return {
    ...(until ? { until } : {}),
    async hits() {
      const [r] = (await owner.query(`SELECT last_value, is_called FROM ${name}_hits`)) as { last_value: string; is_called: boolean }[];
      return r!.is_called ? Number(r!.last_value) : 0;
    },
    async remove() {
      await owner.query(`DROP TRIGGER IF EXISTS ${name} ON ${opts.table}; DROP FUNCTION IF EXISTS ${name}(); DROP SEQUENCE IF EXISTS ${name}_hits;`);
    },
  };
}

/**
 * Terminates (`pg_terminate_backend`, from the owner's connection) every runtime-role backend of
 * `database` caught sleeping in `pg_sleep` — a transaction a {@link act.sleep} fault holds open —
 * polling every few milliseconds until stopped. `killed` lists the terminated pids (once each,
 * although a dying backend may be seen, and signalled, again for a few milliseconds).
 */
export function backendKiller(owner: DataSource, database: string) {
  const killed: number[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const rows = (await owner.query(
        `SELECT pid, pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = $1 AND usename = 'weft_app' AND wait_event = 'PgSleep'`,
        [database],
      )) as { pid: number; ok: boolean }[];
      for (const r of rows) if (r.ok && !killed.includes(r.pid)) killed.push(r.pid);
      await sleep(5);
    }
  })();
  return {
    killed,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** One recorded request to a {@link stubServer}. */
export interface StubHit {
  method: string;
  path: string;
  body: string;
  /** When the request's body was read, and when its answer was sent (0 until then); ms since the epoch. */
  at: number;
  endedAt: number;
}

/**
 * A local HTTP service that counts what it receives. `reply(req, res, n, body)` answers (default
 * 200 `{"ok":true}`), now or later; `n` is the 1-based number of requests so far to that path and
 * `body` the request's body. `maxActive` is the most requests it held unanswered at once.
 */
export async function stubServer(reply?: (req: IncomingMessage, res: ServerResponse, n: number, body: string) => void) {
  const hits: StubHit[] = [];
  let active = 0;
  let maxActive = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const hit: StubHit = { method: req.method ?? 'GET', path, body, at: Date.now(), endedAt: 0 };
      hits.push(hit);
      maxActive = Math.max(maxActive, ++active);
      res.on('finish', () => (hit.endedAt = Date.now()));
      res.on('close', () => active--); // answered, or the caller went away
      const n = hits.filter((h) => h.path === path).length;
      if (reply) return reply(req, res, n, body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    hits,
    get maxActive() {
      return maxActive;
    },
    /** Forgets the requests seen so far (and the most held at once). */
    reset() {
      hits.length = 0;
      maxActive = active;
    },
    /** Requests received for `path`. */
    count: (path: string) => hits.filter((h) => h.path === path).length,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * A separate process's view of the database: its own pool on `url` (the runtime role) and its own
 * coordinator with recording ports — what a second scheduler or API replica would have.
 */
export async function openReplica(url: string, opts: RunCoordinatorOptions & { poolSize?: number } = {}) {
  const { poolSize, ...coordinatorOpts } = opts;
  const ds = createDataSource(url, { poolSize: poolSize ?? 4, applicationName: 'weft-test-replica' });
  await ds.initialize();
  const dispatcher = new RecordingDispatcher();
  const logger = new MemoryLogger();
  const coordinator = new RunCoordinator(ds, dispatcher, new RecordingPublisher(), { logger, ...coordinatorOpts });
  return {
    ds,
    dispatcher,
    logger,
    coordinator,
    /** Opens every connection of the pool now, so a race is not decided by who connects first. */
    async warm(n = poolSize ?? 4) {
      await Promise.all(Array.from({ length: n }, () => ds.query('SELECT pg_sleep(0.02)')));
    },
    async close() {
      if (ds.isInitialized) await ds.destroy();
    },
  };
}

export type Replica = Awaited<ReturnType<typeof openReplica>>;

/** Rows of `table` (a tenant table) for the tenant, optionally filtered by `where` over `$2`. */
export async function countRows(ds: DataSource, tenantId: string, table: string, where = 'true', param?: unknown): Promise<number> {
  const r = await withTenant(ds, tenantId, (m) =>
    sql<{ n: number }>(m, `SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1 AND ${where}`, param === undefined ? [tenantId] : [tenantId, param]),
  );
  return r.rows[0]!.n;
}

/** Job ids (`taskId:attempt`) enqueued more than once across `dispatchers`. */
export function duplicateJobs(...dispatchers: RecordingDispatcher[]): string[] {
  const seen = new Map<string, number>();
  for (const d of dispatchers) for (const j of d.jobs) seen.set(`${j.taskId}:${j.attempt}`, (seen.get(`${j.taskId}:${j.attempt}`) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
}

/**
 * A worker and a scheduler as in production — Bull on Redis, the lost-job sweep and all — booted
 * by the composition root on a test database (`db.url`, the runtime role) under the database's
 * own Bull prefix, plus a coordinator whose dispatcher is that Bull (the API's side). `env`
 * adds settings (e.g. `WEFT_MAX_OUTPUT_BYTES`); `roles` defaults to worker and scheduler.
 */
export async function startWorkerPlatform(
  db: { url: string; ownerUrl: string; ds: DataSource },
  env: Record<string, string | number> = {},
  roles: { api?: boolean; worker?: boolean; scheduler?: boolean } = { worker: true, scheduler: true },
) {
  const config = testConfig(db, env);
  const platform = await startPlatform(config, { ...roles, host: '127.0.0.1' });
  const queues = new BullTaskQueues(config.redisUrl, queuePrefix(db.url));
  const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), { logger: new MemoryLogger() });
  return {
    config,
    url: platform.url,
    queues,
    coordinator,
    async close() {
      await platform.close();
      await Promise.all(
        config.queues.map((q) =>
          queues
            .queue(q)
            .obliterate({ force: true })
            .catch(() => undefined),
        ),
      );
      await queues.close();
    },
  };
}

/**
 * Deletes every Redis key of the installation on database `databaseUrl` (its Bull prefix): a
 * FLUSHALL of that installation's keys only, so other suites sharing the Redis keep theirs.
 * Returns how many keys it deleted.
 */
export async function flushInstallation(redis: Redis, databaseUrl: string): Promise<number> {
  const prefix = queuePrefix(databaseUrl);
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}
