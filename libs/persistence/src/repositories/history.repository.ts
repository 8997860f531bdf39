import type { Json } from '../json.js';
import { jsonb } from '../sql.js';
import type { RunPatch, Transaction } from './event-rows.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';
import { GATE, runWrites, type WritePart } from './write-batch.js';

/** One event's `run_events` row and the run row's change with it. */
export interface HistoryEntry {
  /** The run's event sequence number after the event. */
  seq: number;
  /** The event's type and, apart, the rest of it as recorded. */
  type: string;
  payload: Json;
  nodeId: string | null;
  attempt: number | null;
  /** The event's clock reading. */
  at: Date;
  /** Summaries of the actions the event produced. */
  actions: Json[];
  /** Why the event changed nothing, if it did not. */
  ignored?: string;
  /** Why the event was rejected (or applied as a failure). */
  error?: string;
  /** The run row's columns the event changes besides `event_seq` and `updated_at`. */
  patch: RunPatch;
}

/**
 * The run history (`run_events`) as the coordinator appends it, inside the event's tenant
 * transaction: each event's row goes with the run row's `event_seq`, `updated_at` and patch.
 */
export class HistoryRepository extends TenantScopedRepository {
  constructor(m: Transaction) {
    super(m);
  }

  /**
   * The history of one event as two writes for the event's batched statement: the `run_events`
   * row, and the run row's `event_seq` and `updated_at` with the event's patch (status, output…).
   * With `derived` (a NodeCompleted event the completed task's row keeps: see
   * `TaskWriteRepository.completePart`), only the run row's write: the history derives the entry.
   */
  parts(tenantId: string, runId: string, e: HistoryEntry, derived = false): WritePart[] {
    const params: unknown[] = [tenantId, runId, e.seq, e.at];
    const sets = ['event_seq = $3', 'updated_at = $4'];
    const set = (column: string, value: unknown, cast = '') => {
      params.push(value);
      sets.push(`${column} = $${params.length}${cast}`);
    };
    const { patch } = e;
    if (patch.status !== undefined) set('status', patch.status);
    if (patch.version !== undefined) set('version', patch.version);
    if (patch.input !== undefined) set('input', jsonb(patch.input), '::jsonb');
    if (patch.config !== undefined) set('config', jsonb(patch.config), '::jsonb');
    if (patch.output !== undefined) set('output', patch.output === null ? null : jsonb(patch.output), '::jsonb');
    if (patch.error !== undefined) set('error', patch.error);
    if (patch.finishedAt !== undefined) set('finished_at', patch.finishedAt, '::timestamptz');
    if (patch.pausedAt !== undefined) set('paused_at', patch.pausedAt, '::timestamptz');
    if (patch.pauseReason !== undefined) set('pause_reason', patch.pauseReason);
    if (patch.deadlineAt !== undefined) set('deadline_at', patch.deadlineAt, '::timestamptz');
    if (patch.decidedStatus !== undefined) set('decided_status', patch.decidedStatus);
    if (patch.decidedError !== undefined) set('decided_error', patch.decidedError);
    if (patch.decidedOutput !== undefined) set('decided_output', patch.decidedOutput === null ? null : jsonb(patch.decidedOutput), '::jsonb');
    const update = `UPDATE runs SET ${sets.join(', ')} WHERE tenant_id = $1 AND id = $2`;
    const run: WritePart = { text: update, gated: `${update} AND ${GATE}`, params };
    if (derived) return [run];
    return [
      {
        text: `INSERT INTO run_events (tenant_id, run_id, seq, type, at, node_id, attempt, payload, actions, ignored, error)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11)`,
        gated: `INSERT INTO run_events (tenant_id, run_id, seq, type, at, node_id, attempt, payload, actions, ignored, error)
                SELECT $1::uuid, $2::uuid, $3::int, $4::text, $5::timestamptz, $6::text, $7::int, $8::jsonb, $9::jsonb, $10::text, $11::text
                 WHERE ${GATE}`,
        params: [tenantId, runId, e.seq, e.type, e.at, e.nodeId, e.attempt, jsonb(e.payload), JSON.stringify(e.actions), e.ignored ?? null, e.error ?? null],
      },
      run,
    ];
  }

  /** Appends entry `e` of run `runId` now, in one statement (sent with its COMMIT in a transaction of its own). */
  async append(tenantId: string, runId: string, e: HistoryEntry): Promise<void> {
    await this.inTenant(tenantId, (m) => runWrites(m, tenantId, runId, this.parts(tenantId, runId, e), { atCommit: true }));
  }
}
