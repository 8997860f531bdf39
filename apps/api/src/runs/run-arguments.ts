/** The checks of a run API call's arguments: page sizes, priorities, run ids. */
import { FLOW_LIMITS, WeftError } from '@weft/engine';
import { isUuid, RUN_ITEMS_PAGE_DEFAULT, RUN_ITEMS_PAGE_MAX } from '@weft/persistence';
import { checkFirst } from '../common/page-size.js';

/** A page size of tasks or history: `first` when given (1…{@link RUN_ITEMS_PAGE_MAX}), else the default. */
export function pageSize(first: number | null | undefined): number {
  checkFirst(first, RUN_ITEMS_PAGE_MAX);
  return first ?? RUN_ITEMS_PAGE_DEFAULT;
}

/**
 * Refuses a start priority that is not an integer from {@link FLOW_LIMITS}.minPriority (1) to
 * maxPriority (5): BAD_USER_INPUT naming `priority`. Null or undefined pass (the definition's).
 */
export function checkPriority(priority: number | null | undefined): void {
  const { minPriority: min, maxPriority: max } = FLOW_LIMITS;
  if (priority != null && (!Number.isInteger(priority) || priority < min || priority > max)) {
    const message = `must be an integer from ${min} (first) to ${max}`;
    throw new WeftError('BAD_USER_INPUT', `priority ${message}, got ${priority}`, [{ path: 'priority', message }]);
  }
}

export function assertRunId(runId: string): void {
  if (!isUuid(runId)) throw runNotFound(runId);
}

export function runNotFound(runId: string): WeftError {
  return new WeftError('NOT_FOUND', isUuid(runId) ? `Run ${runId} not found` : 'Run not found');
}
