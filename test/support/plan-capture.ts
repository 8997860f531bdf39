import type { EventEmitter } from 'node:events';
import type { DataSource } from 'typeorm';

/**
 * The plans PostgreSQL really executes for a DataSource's statements, as `auto_explain` reports
 * them: {@link explainEveryStatement} makes each new session of a database load the module and
 * send every plan (nested statements of functions included) to its client as a NOTICE, and a
 * {@link PlanCapture} collects the NOTICEs of a DataSource's pooled connections while recording.
 * So a test reads the plans of the statements the repositories send — prepared, sent with
 * `EXECUTE` in a multi-statement message, or run inside a SECURITY DEFINER function — without
 * copying any statement's text.
 */

/** One executed statement: its text (a prepared statement's own text for `EXECUTE`) and its plan. */
export interface ExecutedPlan {
  query: string;
  plan: string;
}

/**
 * Makes every session opened on database `name` from now on explain each statement it runs to
 * its client (`auto_explain` at NOTICE level, no duration threshold). `owner` must be a superuser
 * connection: the settings are superuser-only. Sessions already open are not affected.
 */
export async function explainEveryStatement(owner: DataSource, name: string): Promise<void> {
  const db = `"${name.replace(/"/g, '""')}"`;
  for (const setting of [
    `session_preload_libraries = 'auto_explain'`,
    'auto_explain.log_min_duration = 0',
    `auto_explain.log_level = 'notice'`,
    'auto_explain.log_nested_statements = on',
  ]) {
    await owner.query(`ALTER DATABASE ${db} SET ${setting}`);
  }
}

/** Collects the plans the pooled connections of a DataSource receive while {@link recording}. */
export class PlanCapture {
  readonly plans: ExecutedPlan[] = [];
  recording = false;

  /** Listens on every connection of `ds`'s pool, those it opens later included; `ds` must be initialized. */
  attach(ds: DataSource): void {
    const pool = (ds.driver as unknown as { master: EventEmitter & { _clients?: EventEmitter[] } }).master;
    const listen = (client: EventEmitter) =>
      client.on('notice', (msg: { message?: string }) => {
        if (this.recording) {
          const executed = parsePlanNotice(msg.message ?? '');
          if (executed) this.plans.push(executed);
        }
      });
    pool.on('connect', listen);
    for (const client of pool._clients ?? []) listen(client);
  }
}

/**
 * An auto_explain NOTICE (`duration: … ms  plan:`, `Query Text: …` over one or more lines, then
 * the plan, whose first line is the top node with its cost) as query and plan; undefined for
 * any other notice.
 */
export function parsePlanNotice(text: string): ExecutedPlan | undefined {
  const lines = text.split('\n');
  if (!/^duration: [\d.]+ ms\s+plan:$/.test(lines[0] ?? '') || !lines[1]?.startsWith('Query Text: ')) return undefined;
  const top = lines.findIndex((l, i) => i > 1 && /\(cost=\d/.test(l));
  if (top < 0) return undefined;
  return { query: [lines[1].slice('Query Text: '.length), ...lines.slice(2, top)].join('\n'), plan: lines.slice(top).join('\n') };
}
