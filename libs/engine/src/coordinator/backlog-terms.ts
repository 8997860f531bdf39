import { RUN_PAUSED_HOLD, type NewOutboxRow } from '@weft/persistence';
import type { WorkflowNode } from '../index.js';

/**
 * The terms of a task attempt's backlog row: its hold, and its schedule-to-start deadline.
 * - A paused run's row is held (`RUN_PAUSED`, no end: its resume releases it), with `paused` as
 *   its sentence; else a row due after now waits out its retry backoff (`BACKOFF` until then);
 *   else it is ready.
 * - A node with `schedule_to_start_seconds` gives the row a deadline that long after it became
 *   ready (`notBefore`, after its backoff).
 */
export function backlogTerms(
  node: WorkflowNode | undefined,
  notBefore: Date,
  now: Date,
  paused: string | undefined,
): Pick<NewOutboxRow, 'holdReason' | 'holdDetail' | 'heldUntil' | 'startBy'> {
  const toStart = node?.schedule_to_start_seconds;
  const startBy = toStart === undefined ? {} : { startBy: new Date(notBefore.getTime() + toStart * 1000) };
  if (paused !== undefined) return { holdReason: RUN_PAUSED_HOLD, holdDetail: paused, heldUntil: null, ...startBy };
  if (notBefore.getTime() <= now.getTime()) return startBy;
  return { holdReason: 'BACKOFF', holdDetail: `retry backoff until ${notBefore.toISOString()}`, heldUntil: notBefore, ...startBy };
}
