import pg from 'pg';
import type { DataSource, QueryRunner } from 'typeorm';
import { mapDriverError } from './errors.js';
import { executeLiterals } from './round-trips.js';
import { statementName } from './sql.js';
import { isUuid, releaseRunner } from './tenant-transaction.js';

/** Reports one message carries at most: a larger backlog goes in the next message. */
export const MAX_BATCH = 64;

/** One statement handed to the committer: its tenant, its text and its parameters. */
export interface CommitItem {
  tenantId: string;
  text: string;
  params: unknown[];
}

/** What the committer has done since it started (for benchmarks and tests). */
export interface CommitterStats {
  /** Messages sent, each one transaction and one commit. */
  commits: number;
  /** Statements those messages carried. */
  statements: number;
  /** Messages that failed; their statements were handed back to their callers with the error. */
  failed: number;
}

interface Waiting extends CommitItem {
  resolve: (rows: Record<string, unknown>[]) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit without a timer, on one pooled connection while it has work: every statement handed over while
 * the previous message was in flight goes in the next message, grouped by tenant, as one implicit
 * transaction with one commit (one WAL flush):
 *
 * `[PREPARE …;] select set_config('app.tenant_id', t1, true); EXECUTE s1(…); EXECUTE s2(…);
 * select set_config('app.tenant_id', t2, true); EXECUTE s3(…)`
 *
 * A statement runs under its own tenant's row-level security (the setting is local to the
 * transaction and set again before each tenant's statements). A caller's promise resolves with
 * its statement's rows once the message committed: a write is durable before its caller goes on.
 * An idle committer sends a statement at once, so a lone caller waits for one round trip, as it
 * would on its own connection.
 *
 * A statement that fails aborts the message (PostgreSQL runs the rest of it no further, and
 * nothing of it commits): every caller of that message gets the error, and each must take its
 * own way again (the event pipeline's locking path), so one bad row costs the others a retry,
 * never their write. Statements meant for this path check what they expect without raising
 * (a fence that fails is a result, not an error). A connection whose message failed is
 * discarded (which of its PREPAREs ran is unknown); an idle committer holds no connection.
 */
export class StepCommitter {
  private queue: Waiting[] = [];
  private busy = false;
  private runner: QueryRunner | undefined;
  private client: pg.ClientBase | undefined;
  private readonly counts: CommitterStats = { commits: 0, statements: 0, failed: 0 };

  constructor(private readonly ds: DataSource) {}

  /** Messages, statements and failures so far. */
  get stats(): CommitterStats {
    return { ...this.counts };
  }

  /**
   * Runs `item` in the next message; resolves its rows once that message committed. Rejects with
   * the message's error (mapped as `withTenant` maps it) when the message failed, whichever of its
   * statements failed; with a TypeError when the tenant id is not a UUID, or when a parameter holds
   * an escaped NUL (`\u0000`, which `jsonb` cannot hold): that statement would fail the whole
   * message, so it is refused alone, before anything is sent.
   */
  submit(item: CommitItem): Promise<Record<string, unknown>[]> {
    if (!isUuid(item.tenantId)) return Promise.reject(new TypeError(`tenant id must be a UUID, got ${JSON.stringify(item.tenantId)}`));
    if (item.params.some((p) => typeof p === 'string' && p.includes('\\u0000'))) {
      return Promise.reject(new TypeError('a parameter holds \\u0000, which jsonb cannot hold: the statement would fail its whole message'));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ ...item, resolve, reject });
      if (!this.busy) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, MAX_BATCH);
        await this.send(batch);
      }
    } finally {
      // Idle: the connection goes back to the pool (a pool that is shut down must not wait for it).
      await this.release();
      this.busy = false;
      if (this.queue.length) void this.drain();
    }
  }

  /** Sends `batch` as one message and settles each caller. */
  private async send(batch: Waiting[]): Promise<void> {
    let client: pg.ClientBase;
    try {
      client = await this.connection();
    } catch (err) {
      for (const w of batch) w.reject(mapDriverError(err));
      return;
    }
    // Grouped by tenant, in the order each tenant first came: a tenant's statements keep their order.
    const byTenant = new Map<string, Waiting[]>();
    for (const w of batch) {
      const list = byTenant.get(w.tenantId);
      if (list) list.push(w);
      else byTenant.set(w.tenantId, [w]);
    }
    const parts: string[] = [];
    const order: Array<Waiting | undefined> = [];
    const prepared = this.preparedOn(client);
    const newlyPrepared: string[] = [];
    let first = true;
    for (const [tenantId, items] of byTenant) {
      // Plans made in the message (a statement's first ones, a foreign key's check) use the
      // indexes whatever the statistics say: every lookup here is by key.
      parts.push(`select ${first ? `set_config('enable_seqscan', 'off', true), ` : ''}set_config('app.tenant_id', ${pg.escapeLiteral(tenantId)}, true)`);
      first = false;
      order.push(undefined);
      for (const w of items) {
        const name = committerName(w.text);
        const literals = name === undefined ? undefined : executeLiterals(w.params);
        if (name === undefined || literals === undefined) {
          w.reject(new Error('statement cannot be sent as EXECUTE with literals'));
          continue;
        }
        if (!prepared.has(name) && !newlyPrepared.includes(name)) {
          // Prepared ahead of the transaction's statements, in the same message.
          parts.unshift(`PREPARE ${name} AS ${w.text}`);
          order.unshift(undefined);
          newlyPrepared.push(name);
        }
        parts.push(literals.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${literals.join(', ')})`);
        order.push(w);
      }
    }
    const settled = order.filter((w): w is Waiting => w !== undefined);
    if (settled.length === 0) return;
    try {
      const result = (await client.query(parts.join(';\n'))) as unknown as pg.QueryResult | pg.QueryResult[];
      const results = Array.isArray(result) ? result : [result];
      for (const name of newlyPrepared) prepared.add(name);
      this.counts.commits++;
      this.counts.statements += settled.length;
      order.forEach((w, i) => w?.resolve((results[i]?.rows ?? []) as Record<string, unknown>[]));
    } catch (err) {
      this.counts.failed++;
      await this.release(err);
      const mapped = mapDriverError(err);
      for (const w of settled) w.reject(mapped);
    }
  }

  /** The committer's connection while it has work, from the pool; its prepared statements are remembered per connection. */
  private async connection(): Promise<pg.ClientBase> {
    if (this.client) return this.client;
    const runner = this.ds.createQueryRunner();
    try {
      this.client = (await runner.connect()) as pg.ClientBase;
    } catch (err) {
      await runner.release().catch(() => undefined);
      throw err;
    }
    this.runner = runner;
    return this.client;
  }

  /** The statements `client` prepared for the committer (by SQL PREPARE, which node-postgres does not track). */
  private preparedOn(client: pg.ClientBase): Set<string> {
    let names = PREPARED.get(client);
    if (!names) PREPARED.set(client, (names = new Set()));
    return names;
  }

  /** Gives the connection back; with `cause`, discarded (after a failed message, whose PREPAREs may or may not have run). */
  private async release(cause?: unknown): Promise<void> {
    const runner = this.runner;
    this.runner = undefined;
    this.client = undefined;
    if (!runner) return;
    await releaseRunner(runner, cause).catch(() => undefined);
  }
}

/** The committer's prepared statements of each pooled connection. */
const PREPARED = new WeakMap<pg.ClientBase, Set<string>>();

/**
 * The name the committer PREPAREs `text` under: {@link statementName}'s with its own prefix
 * (`weftc_`). node-postgres names a statement run alone by `statementName` and knows nothing of
 * a SQL PREPARE, so one text prepared both ways on a pooled connection would fail the second
 * with "prepared statement already exists".
 */
function committerName(text: string): string | undefined {
  const name = statementName(text);
  return name === undefined ? undefined : `weftc_${name.slice('weft_'.length)}`;
}
