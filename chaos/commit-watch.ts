/**
 * Finding a worker whose step committer has a message in flight, for the `worker-kill-commit`
 * fault: the committer sends a whole batch of fenced reports as one simple-protocol message,
 * which PostgreSQL shows as one active query in `pg_stat_activity` (its text begins with the
 * statements it prepares, or with the first tenant's `set_config('enable_seqscan', …)`). The
 * backend's `client_port` is the worker's end of the connection, and the worker is the Weft
 * process holding a TCP socket on that local port (`/proc/<pid>/fd` → `/proc/net/tcp{,6}`).
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Pool } from 'pg';
import type { WeftProcess } from './processes.js';

/** A committer message seen running, and the worker that sent it. */
export interface CommitInFlight {
  worker: WeftProcess;
  /** The backend running it. */
  backendPid: number;
  /** Fenced reports in it, as far as `pg_stat_activity` shows its text (1 KiB by default). */
  reports: number;
}

/** Local ports of the TCP sockets process `pid` holds; empty when it is gone. */
export function tcpPorts(pid: number): Set<number> {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return new Set();
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    // `sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …`
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9]!)) ports.add(parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

/** The committer's messages running now in database `dbName`: backend pid, client port, text. */
async function committerMessages(owner: Pool, dbName: string): Promise<Array<{ pid: number; port: number; query: string }>> {
  const r = await owner.query(
    `SELECT pid, client_port AS port, query FROM pg_stat_activity
      WHERE datname = $1 AND state = 'active' AND application_name LIKE 'weft%' AND client_port IS NOT NULL
        AND (query LIKE 'PREPARE weftc\\_%' OR query LIKE 'select set\\_config(''enable\\_seqscan'', ''off'', true), set\\_config(''app.tenant\\_id''%')`,
    [dbName],
  );
  return r.rows as Array<{ pid: number; port: number; query: string }>;
}

/**
 * Polls every `everyMs` until `giveUpAt` (a `clock()` reading) for a committer message of one of
 * `workers` (running, not paused) that is still running; undefined when none was seen.
 */
export async function commitInFlight(
  owner: Pool,
  dbName: string,
  workers: WeftProcess[],
  clock: () => number,
  giveUpAt: number,
  everyMs = 2,
): Promise<CommitInFlight | undefined> {
  while (clock() < giveUpAt) {
    for (const m of await committerMessages(owner, dbName)) {
      const worker = workers.find((w) => w.running && !w.paused && w.pid !== undefined && tcpPorts(w.pid).has(m.port));
      if (worker) return { worker, backendPid: m.pid, reports: (m.query.match(/EXECUTE weftc_/g) ?? []).length };
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return undefined;
}

/** Whether backend `pid` still runs a statement (the message outlived the worker that sent it). */
export async function stillActive(owner: Pool, pid: number): Promise<boolean> {
  const r = await owner.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'`, [pid]);
  return (r.rowCount ?? 0) > 0;
}
