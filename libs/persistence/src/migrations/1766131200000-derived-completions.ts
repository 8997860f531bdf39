import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The payload of a history entry derived from a completed task row: the NodeCompleted event as
 * the worker reported it (`taskId`, `nodeId`, `attempt`, `output`). Its size is known without
 * printing the output: the other three keys printed with a JSON null, less that null, plus the
 * output's stored size.
 */
const DERIVED_PAYLOAD = `jsonb_build_object('taskId', t.id, 'nodeId', t.node_id, 'attempt', t.attempt, 'output', COALESCE(t.output, 'null'::jsonb))`;
const DERIVED_PAYLOAD_BYTES = `octet_length(jsonb_build_object('taskId', t.id, 'nodeId', t.node_id, 'attempt', t.attempt, 'output', NULL::jsonb)::text) - 4
  + CASE WHEN t.output IS NULL THEN 4 ELSE COALESCE(t.output_bytes, octet_length(t.output::text)) END`;

/**
 * A completed task recorded once. A step's NodeCompleted event, whose history entry would repeat
 * the task row (its payload is the task's id, node, attempt and output), is kept on the row its
 * completion writes: `completed_seq` (the event's seq) and `completed_actions` (the summaries of
 * the actions it produced, with their size) instead of a `run_events` row of its own.
 *
 * `run_history` is the history as readers see it: every `run_events` row, and an entry derived
 * from each task row with a `completed_seq` (type NodeCompleted, at its `finished_at`, no ignored
 * reason or error). A view with the caller's rights (`security_invoker`), so row-level security
 * applies to both tables as it does to them. A write that deletes task rows (a retry from a node)
 * first copies their derived entries into `run_events`: the history never loses an entry.
 */
export class DerivedCompletions1766131200000 implements MigrationInterface {
  name = 'DerivedCompletions1766131200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks ADD COLUMN completed_seq int, ADD COLUMN completed_actions jsonb, ADD COLUMN completed_actions_bytes int`);
    // The filter stands above the UNION ALL, not in its task branch: PostgreSQL flattens a UNION
    // ALL only when its branches have no WHERE of their own, and only flattened branches get the
    // reader's keys (a run, a seq) pushed into their index scans. A branch with its own WHERE made
    // a keyed read of one entry scan every task row of the tenant.
    await q.query(`
      CREATE VIEW run_history WITH (security_invoker = true) AS
        SELECT * FROM (
          SELECT e.tenant_id, e.run_id, e.seq, e.type, e.at, e.node_id, e.attempt, e.payload, e.actions, e.ignored, e.error,
                 e.payload_bytes, e.actions_bytes
            FROM run_events e
          UNION ALL
          SELECT t.tenant_id, t.run_id, t.completed_seq, 'NodeCompleted'::text, t.finished_at, t.node_id, t.attempt,
                 ${DERIVED_PAYLOAD}, t.completed_actions, NULL::text, NULL::text,
                 ${DERIVED_PAYLOAD_BYTES}, t.completed_actions_bytes
            FROM tasks t
        ) h
       WHERE h.seq IS NOT NULL`);
    // A derived entry is found as a stored one is, by its run and seq (`run_events`' primary key).
    await q.query(`CREATE INDEX tasks_completed_events ON tasks (tenant_id, run_id, completed_seq) WHERE completed_seq IS NOT NULL`);
    await q.query(`GRANT SELECT ON run_history TO weft_app`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Derived entries become rows again before their columns go. Row-level security off: an owner
    // it would apply to (not a superuser) gets an error, never a copy that silently misses rows.
    await q.query(`SET row_security = off`);
    await q.query(`
      INSERT INTO run_events (tenant_id, run_id, seq, type, at, node_id, attempt, payload, actions)
      SELECT tenant_id, run_id, seq, type, at, node_id, attempt, payload, actions FROM run_history h
       WHERE NOT EXISTS (SELECT 1 FROM run_events e WHERE e.tenant_id = h.tenant_id AND e.run_id = h.run_id AND e.seq = h.seq)`);
    await q.query(`RESET row_security`);
    await q.query(`DROP VIEW run_history`);
    await q.query(`DROP INDEX tasks_completed_events`);
    await q.query(`ALTER TABLE tasks DROP COLUMN completed_seq, DROP COLUMN completed_actions, DROP COLUMN completed_actions_bytes`);
  }
}
