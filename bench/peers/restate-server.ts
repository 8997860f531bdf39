/**
 * A Restate server for the peers bench: the `restate-server` binary that
 * `@restatedev/restate-server` ships (its platform package), started with its default
 * configuration — one node with every role, the log on its own log-server — on a data folder of
 * the bench's, and the admin API calls the bench needs: health, version, deployment registration
 * and SQL introspection (`POST /query`).
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { promisify } from 'node:util';
import { Child } from '../peer-children.js';
import { requestJson } from '../peer-http.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The default ports of a single node (the bench runs it alone in its network namespace). */
export const ADMIN_URL = 'http://127.0.0.1:9070';
export const INGRESS_URL = 'http://127.0.0.1:8080';

/**
 * The server binary for this platform.
 * @throws Error naming the package that is missing
 */
export function serverBinary(): string {
  const pkg = `@restatedev/restate-server-${platform()}-${arch()}`;
  try {
    return createRequire(import.meta.url).resolve(`${pkg}/bin/restate-server`);
  } catch {
    throw new Error(`${pkg} is not installed in bench/peers/node_modules (restate-server ships binaries for linux and darwin, x64 and arm64)`);
  }
}

/** The environment the server runs with: this one, with plain (ANSI-free) logs. */
function serverEnv(): NodeJS.ProcessEnv {
  return { ...process.env, RESTATE_LOG_DISABLE_ANSI_CODES: 'true' };
}

/**
 * The durability settings of the default configuration, from `restate-server --dump-config`
 * (what the server would run with, environment overrides included): one line per setting.
 */
export async function durabilitySettings(): Promise<string[]> {
  const { stdout } = await run(serverBinary(), ['--dump-config'], { env: serverEnv(), maxBuffer: 16 * 1024 * 1024 });
  const values = new Map<string, string>();
  let section = '';
  let open: { key: string; parts: string[] } | undefined; // a multi-line array being read
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    if (open) {
      open.parts.push(line);
      if (line.startsWith(']')) {
        values.set(open.key, open.parts.join(' ').replace(/,\s*]/, ']'));
        open = undefined;
      }
      continue;
    }
    const head = /^\[([^\]]+)\]$/.exec(line);
    if (head) section = head[1];
    const kv = /^([a-z0-9-]+)\s*=\s*(.+)$/.exec(line);
    if (!kv) continue;
    const key = section ? `${section}.${kv[1]}` : kv[1];
    if (kv[2] === '[') open = { key, parts: ['['] };
    else values.set(key, kv[2]);
  }
  const get = (k: string) => values.get(k) ?? '(not in the dump)';
  return [
    `roles = ${get('roles').replace(/\[\s+/, '[')}; default-replication = ${get('default-replication')}; bifrost.default-provider = ${get('bifrost.default-provider')} (the log, on this node's own log-server)`,
    `log-server.rocksdb-disable-wal-fsync = ${get('log-server.rocksdb-disable-wal-fsync')}: the log-server syncs its RocksDB WAL on each write batch, before it acknowledges the append`,
    `worker.storage (the partition store, rebuilt from the log) has no fsync setting in the dump; bifrost.local.rocksdb-disable-wal-fsync = ${get('bifrost.local.rocksdb-disable-wal-fsync')} (not the default provider)`,
    'source: restate-server --dump-config (defaults, no config file)',
  ];
}

/** A running server. */
export class RestateServer {
  private constructor(readonly child: Child) {}

  /**
   * Starts the server on `dataDir` (its base dir and working directory, for its sockets) and waits
   * until the admin API and the ingress answer.
   * @throws Error with the end of its log when it does not come up within 60 s
   */
  static async start(dataDir: string, logFile: string): Promise<RestateServer> {
    const child = new Child('restate-server', serverBinary(), ['--base-dir', dataDir, '--no-logo'], logFile, { env: serverEnv(), cwd: dataDir }).start();
    const server = new RestateServer(child);
    const deadline = Date.now() + 60_000;
    for (const url of [`${ADMIN_URL}/health`, `${INGRESS_URL}/restate/health`]) {
      for (;;) {
        if (!child.running) throw new Error(`restate-server exited while starting; see ${logFile}:\n${child.tail()}`);
        const ok = await requestJson('GET', url, undefined, 2_000).then((r) => r.status === 200, () => false);
        if (ok) break;
        if (Date.now() > deadline) throw new Error(`restate-server did not answer ${url} within 60 s; see ${logFile}:\n${child.tail()}`);
        await sleep(100);
      }
    }
    return server;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The server's version, from the admin API's `/version`. */
  async version(): Promise<string> {
    const r = await requestJson('GET', `${ADMIN_URL}/version`);
    return String((r.body as { version?: string })?.version ?? 'unknown');
  }

  /**
   * Registers the service deployment at `uri`; resolves the protocol versions it offers.
   * Retries for up to 30 s while the deployment does not answer yet.
   */
  async register(uri: string): Promise<{ min: number; max: number; sdk: string }> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await requestJson('POST', `${ADMIN_URL}/deployments`, { uri, force: true });
      if (r.status === 200 || r.status === 201) {
        const b = r.body as { min_protocol_version: number; max_protocol_version: number; sdk_version?: string };
        return { min: b.min_protocol_version, max: b.max_protocol_version, sdk: b.sdk_version ?? 'unknown' };
      }
      if (Date.now() > deadline) throw new Error(`registering the deployment ${uri} failed: HTTP ${r.status} ${r.text.slice(0, 300)}`);
      await sleep(250);
    }
  }

  /**
   * Runs `sql` on the admin API's SQL introspection.
   * @throws Error with the query and the answer when the status is not 200
   */
  async query<R = Record<string, unknown>>(sql: string): Promise<R[]> {
    const r = await requestJson('POST', `${ADMIN_URL}/query`, { query: sql });
    if (r.status !== 200) throw new Error(`Restate's /query failed (HTTP ${r.status}) for ${sql}: ${r.text.slice(0, 300)}`);
    return ((r.body as { rows?: R[] }).rows ?? []) as R[];
  }

  /** SIGTERM (the server drains and closes its stores), SIGKILL after 30 s. */
  stop(): Promise<void> {
    return this.child.stop(30_000);
  }
}
