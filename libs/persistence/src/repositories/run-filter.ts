import type { SelectQueryBuilder } from 'typeorm';
import { isUuid } from '../tenant-transaction.js';

/** Filter of {@link RunRepository.listRuns} and {@link RunRepository.countRuns}; every field is optional and they combine with AND. */
export interface RunFilter {
  status?: string;
  workflowId?: string;
  /** Runs of this version number (with workflowId: of that workflow). */
  version?: number;
  /** Runs created at or after this instant. */
  createdAfter?: Date;
  /** Runs created strictly before this instant. */
  createdBefore?: Date;
  /** Runs started by this schedule. */
  scheduleId?: string;
  /** Runs carrying every one of these labels (key and value); `{}` or absent: no condition. */
  labels?: Record<string, string>;
  /** Runs with a FAILED task (of any attempt or iteration) of this node. */
  failedNodeId?: string;
  /** Runs whose error holds this text, case-insensitively (taken literally: `%` and `_` are not wildcards). */
  errorContains?: string;
  /** Runs that finished at or after this instant (unfinished runs never match). */
  finishedAfter?: Date;
  /** Runs that finished strictly before this instant (unfinished runs never match). */
  finishedBefore?: Date;
}

/**
 * `text` as a LIKE pattern that matches it literally anywhere (`%text%`), `\` escaping `\`, `%`
 * and `_` (PostgreSQL's default LIKE escape character).
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Adds the conditions of `filter` to `qb`, a query over `runs r` already restricted to its
 * tenant. Each label is asked of `run_labels` (one row per label of a run, keyed tenant first),
 * by equalities only: those are leakproof, so PostgreSQL uses the indexes for them under the
 * row-level security the runtime role reads with (it would not for jsonb containment).
 */
export function applyRunFilter<T extends object>(qb: SelectQueryBuilder<T>, filter: RunFilter): SelectQueryBuilder<T> {
  // A paused run is RUNNING (or QUEUED) in the table, with paused_at set (see apiRunStatus).
  if (filter.status === 'PAUSED') qb.andWhere(`r.status IN ('RUNNING', 'QUEUED') AND r.paused_at IS NOT NULL`);
  else if (filter.status === 'RUNNING' || filter.status === 'QUEUED') qb.andWhere(`r.status = :status AND r.paused_at IS NULL`, { status: filter.status });
  else if (filter.status) qb.andWhere('r.status = :status', { status: filter.status });
  if (filter.workflowId) qb.andWhere('r.workflow_id = :workflowId', { workflowId: filter.workflowId });
  if (filter.version !== undefined) qb.andWhere('r.version = :version', { version: filter.version });
  if (filter.createdAfter) qb.andWhere('r.created_at >= :createdAfter', { createdAfter: filter.createdAfter });
  if (filter.createdBefore) qb.andWhere('r.created_at < :createdBefore', { createdBefore: filter.createdBefore });
  if (filter.scheduleId !== undefined) {
    // An id that is not a UUID names no schedule: no runs (rather than a cast error).
    if (!isUuid(filter.scheduleId)) qb.andWhere('false');
    else qb.andWhere('r.schedule_id = :scheduleId', { scheduleId: filter.scheduleId });
  }
  Object.entries(filter.labels ?? {}).forEach(([key, value], i) => {
    qb.andWhere(
      `EXISTS (SELECT 1 FROM run_labels l WHERE l.tenant_id = r.tenant_id AND l.run_id = r.id AND l.key = :labelKey${i} AND l.value = :labelValue${i})`,
      { [`labelKey${i}`]: key, [`labelValue${i}`]: value },
    );
  });
  if (filter.failedNodeId !== undefined) {
    qb.andWhere(`EXISTS (SELECT 1 FROM tasks t WHERE t.tenant_id = r.tenant_id AND t.run_id = r.id AND t.node_id = :failedNodeId AND t.status = 'FAILED')`, {
      failedNodeId: filter.failedNodeId,
    });
  }
  if (filter.errorContains !== undefined) qb.andWhere('r.error ILIKE :errorPattern', { errorPattern: containsPattern(filter.errorContains) });
  if (filter.finishedAfter) qb.andWhere('r.finished_at >= :finishedAfter', { finishedAfter: filter.finishedAfter });
  if (filter.finishedBefore) qb.andWhere('r.finished_at < :finishedBefore', { finishedBefore: filter.finishedBefore });
  return qb;
}
