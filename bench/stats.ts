/**
 * The cost model's counters: pg_stat_statements / pg_stat_database of the bench database, Redis
 * `INFO commandstats`, and CPU time of processes from /proc/<pid>/stat. Every figure is a
 * difference between two snapshots taken around the measured phase.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Redis } from 'ioredis';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Clock ticks per second of /proc/<pid>/stat's utime and stime. */
export const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of `pid` in seconds, or undefined when it is gone (or not readable). */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields are counted after the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return undefined;
  }
}

/** Whether pg_stat_statements is usable, and why not. */
export interface StatementsSupport {
  available: boolean;
  /** What the bench did (restarted PostgreSQL) or why statements are n/a. */
  note?: string;
  /**
   * Set when the bench changed the server: puts `shared_preload_libraries` back as it was and
   * restarts PostgreSQL again; resolves what it did.
   */
  restore?: () => Promise<string>;
}

/**
 * Makes pg_stat_statements available when asked to: with `restart` other than `never` (the
 * default of `npm run bench`, which leaves a user's server alone), when it is not in
 * `shared_preload_libraries` and this process runs as root with `pg_ctlcluster`, adds it with
 * ALTER SYSTEM and restarts the cluster — with `auto` only once no other client session is
 * connected (waiting up to `quietMs`), so it does not cut other people's test runs short. The
 * result's `restore` undoes both at the end of the bench.
 */
export async function ensureStatements(
  adminUrl: string,
  opts: { restart: 'auto' | 'never' | 'force'; quietMs: number; say: (l: string) => void },
): Promise<StatementsSupport> {
  const admin = new pg.Client({ connectionString: adminUrl, application_name: 'weft-bench' });
  await admin.connect();
  try {
    const spl = String((await admin.query('SHOW shared_preload_libraries')).rows[0].shared_preload_libraries ?? '');
    const libs = spl
      .split(',')
      .map((s) => s.trim().replace(/^"|"$/g, ''))
      .filter(Boolean);
    if (libs.includes('pg_stat_statements')) return { available: true };
    const why = 'pg_stat_statements is not in shared_preload_libraries';
    if (opts.restart === 'never') {
      return {
        available: false,
        note: `${why}; statements/step is n/a (--pg-restart auto would load it by reconfiguring and restarting PostgreSQL, and undo that at the end)`,
      };
    }
    if (process.getuid?.() !== 0 || !existsSync('/usr/bin/pg_ctlcluster')) {
      return { available: false, note: `${why}, and this process cannot restart PostgreSQL (needs root and pg_ctlcluster)` };
    }
    const major = Math.floor(Number((await admin.query('SHOW server_version_num')).rows[0].server_version_num) / 10_000);
    const versions = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql') : [];
    const version = versions.includes(String(major)) ? String(major) : versions[0];
    if (!version) return { available: false, note: `${why}, and /etc/postgresql has no cluster` };

    if (opts.restart === 'auto') {
      const deadline = Date.now() + opts.quietMs;
      let others = 0;
      for (;;) {
        others = Number(
          (await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`)).rows[0].n,
        );
        if (others === 0 || Date.now() > deadline) break;
        await sleep(100);
      }
      if (others > 0) {
        return {
          available: false,
          note: `${why}; not restarting PostgreSQL while ${others} other session(s) are connected (waited ${opts.quietMs / 1000} s; --pg-restart force to restart anyway)`,
        };
      }
    }
    const fromAutoConf = await admin.query(
      `SELECT count(*)::int AS n FROM pg_file_settings WHERE name = 'shared_preload_libraries' AND sourcefile LIKE '%postgresql.auto.conf' AND applied`,
    );
    const previous =
      fromAutoConf.rows[0].n > 0 ? `ALTER SYSTEM SET shared_preload_libraries = '${spl.replace(/'/g, "''")}'` : 'ALTER SYSTEM RESET shared_preload_libraries';
    const value = [...libs, 'pg_stat_statements'].join(',');
    await admin.query(`ALTER SYSTEM SET shared_preload_libraries = '${value.replace(/'/g, "''")}'`);
    await admin.end().catch(() => undefined);
    opts.say(
      `bench: ${why}: ALTER SYSTEM SET shared_preload_libraries = '${value}' and restarting PostgreSQL ${version}/main (pg_ctlcluster); undone at the end`,
    );
    const restore = async (): Promise<string> => {
      const c = new pg.Client({ connectionString: adminUrl, application_name: 'weft-bench' });
      await c.connect();
      try {
        await c.query(previous);
      } finally {
        await c.end().catch(() => undefined);
      }
      await restartCluster(version, adminUrl);
      return `${previous} and restarted PostgreSQL ${version}/main again: its configuration is as the bench found it`;
    };
    const now = await restartCluster(version, adminUrl);
    if (!now.includes('pg_stat_statements')) return { available: false, note: `${why}, and still not after the restart`, restore };
    return { available: true, note: `restarted PostgreSQL ${version}/main to load pg_stat_statements (shared_preload_libraries = '${now}')`, restore };
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** Restarts cluster `version`/main and waits until it answers; resolves its `shared_preload_libraries`. */
async function restartCluster(version: string, adminUrl: string): Promise<string> {
  await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart']);
  for (let i = 0; ; i++) {
    const c = new pg.Client({ connectionString: adminUrl, application_name: 'weft-bench' });
    try {
      await c.connect();
      const now = String((await c.query('SHOW shared_preload_libraries')).rows[0].shared_preload_libraries ?? '');
      await c.end();
      return now;
    } catch (err) {
      await c.end().catch(() => undefined);
      if (i > 100) throw new Error(`PostgreSQL did not come back after the restart: ${(err as Error).message}`);
      await sleep(300);
    }
  }
}

/** One statement's counters over the measured phase. */
export interface StatementRow {
  query: string;
  calls: number;
  totalMs: number;
  rows: number;
}

/**
 * PostgreSQL counters of one database, read over the bench's own connection to it (as the
 * owner). Counts its own queries so they can be taken out of pg_stat_database's transactions;
 * pg_stat_statements rows are those of the runtime role only (the bench queries as another role).
 */
export class PgCounters {
  private own = 0;
  private dbOid?: number;
  private roleOid?: number;

  constructor(
    private readonly client: pg.Client,
    private readonly dbName: string,
    private readonly runtimeRole: string,
    readonly statements: boolean,
  ) {}

  /** Queries this object ran (each one transaction in the bench database). */
  get ownQueries(): number {
    return this.own;
  }

  private async q<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    this.own++;
    return this.client.query<R>(text, values);
  }

  async init(): Promise<void> {
    const r = await this.q<{ db: number; role: number | null }>(
      `SELECT (SELECT oid FROM pg_database WHERE datname = $1)::int AS db, (SELECT oid FROM pg_roles WHERE rolname = $2)::int AS role`,
      [this.dbName, this.runtimeRole],
    );
    this.dbOid = r.rows[0].db;
    this.roleOid = r.rows[0].role ?? undefined;
    if (this.statements) await this.q('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  }

  /** The database's clock (the timestamps Weft writes come from it). */
  async now(): Promise<Date> {
    return (await this.q<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0].now;
  }

  /** Committed + rolled back transactions of the database so far. */
  async transactions(): Promise<number> {
    const r = await this.q<{ n: string }>(`SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = $1`, [this.dbName]);
    return Number(r.rows[0]?.n ?? 0);
  }

  /**
   * Rows written so far by table (`pg_stat_user_tables` of this database: inserted, updated, of
   * which HOT, deleted). The server reports a backend's counts when it goes idle, at most a
   * second late, so a window's difference is exact to about a second's worth at each end.
   */
  async tableRows(): Promise<Map<string, TableRows>> {
    const r = await this.q<{ t: string; ins: string; upd: string; hot: string; del: string }>(
      `SELECT relname AS t, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot, n_tup_del::text AS del FROM pg_stat_user_tables`,
    );
    return new Map(r.rows.map((x) => [x.t, { inserted: Number(x.ins), updated: Number(x.upd), hot: Number(x.hot), deleted: Number(x.del) }]));
  }

  /** Forgets this database's statement counters (other databases keep theirs). */
  async resetStatements(): Promise<void> {
    if (this.statements) await this.q('SELECT pg_stat_statements_reset(0, $1, 0)', [this.dbOid]);
  }

  /** The runtime role's statements in this database since the reset, most called first. */
  async readStatements(): Promise<StatementRow[]> {
    if (!this.statements) return [];
    const r = await this.q<{ query: string; calls: string; total: number; rows: string }>(
      `SELECT query, calls::text, total_exec_time AS total, rows::text FROM pg_stat_statements WHERE dbid = $1 AND userid = $2`,
      [this.dbOid, this.roleOid],
    );
    return r.rows
      .map((x) => ({ query: x.query, calls: Number(x.calls), totalMs: Number(x.total), rows: Number(x.rows) }))
      .sort((a, b) => b.calls - a.calls || b.totalMs - a.totalMs);
  }

  /** Pids of the database's backends and of PostgreSQL's background processes (WAL writer, checkpointer…). */
  async backendPids(): Promise<number[]> {
    const r = await this.q<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 OR datname IS NULL`, [this.dbName]);
    return r.rows.map((x) => x.pid);
  }
}

/** Calls per command from `INFO commandstats` (commands run inside Lua scripts are counted too). */
export async function commandStats(redis: Redis): Promise<Map<string, number>> {
  const text = await redis.info('commandstats');
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out.set(m[1], Number(m[2]));
  return out;
}

/** The Redis server's pid (`INFO server`). */
export async function redisPid(redis: Redis): Promise<number | undefined> {
  const m = (await redis.info('server')).match(/^process_id:(\d+)/m);
  return m ? Number(m[1]) : undefined;
}

/** Local TCP ports of the sockets the given processes hold (from /proc; Linux only). */
export function localPorts(pids: number[]): Set<number> {
  const inodes = new Set<string>();
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          const m = readlinkSync(`/proc/${pid}/fd/${fd}`).match(/^socket:\[(\d+)\]$/);
          if (m) inodes.add(m[1]);
        } catch {
          // closed meanwhile
        }
      }
    } catch {
      // process gone
    }
  }
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f.length > 9 && inodes.has(f[9])) ports.add(parseInt(f[1].split(':').pop()!, 16));
      }
    } catch {
      // not Linux
    }
  }
  return ports;
}

/**
 * Redis clients that belong to none of `pids` and sent a command within the last `withinS`
 * seconds: their commands are in `INFO commandstats` too (it is server-wide).
 */
export async function foreignActiveClients(redis: Redis, pids: number[], withinS: number): Promise<number> {
  const ours = localPorts(pids);
  const list = String(await redis.call('CLIENT', 'LIST'));
  let n = 0;
  for (const line of list.split('\n')) {
    const port = line.match(/\baddr=\S+:(\d+)\b/);
    const idle = line.match(/\bidle=(\d+)\b/);
    if (!port || !idle) continue;
    if (!ours.has(Number(port[1])) && Number(idle[1]) <= withinS) n++;
  }
  return n;
}

/** Rows one table had written (see {@link PgCounters.tableRows}). */
export interface TableRows {
  inserted: number;
  updated: number;
  /** Of `updated`, the HOT ones (no index entry written). */
  hot: number;
  deleted: number;
}

/** What `b` wrote more than `a`, by table, leaving out tables that wrote nothing. */
export function rowsWritten(a: Map<string, TableRows>, b: Map<string, TableRows>): Map<string, TableRows> {
  const out = new Map<string, TableRows>();
  for (const [t, y] of b) {
    const x = a.get(t) ?? { inserted: 0, updated: 0, hot: 0, deleted: 0 };
    const d = { inserted: y.inserted - x.inserted, updated: y.updated - x.updated, hot: y.hot - x.hot, deleted: y.deleted - x.deleted };
    if (d.inserted || d.updated || d.deleted) out.set(t, d);
  }
  return out;
}
