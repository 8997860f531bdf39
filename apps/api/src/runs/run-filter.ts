import { checkLabels } from '@weft/engine';
import type { RunFilter as RunRowFilter } from '@weft/persistence';
import type { RunFilter } from './run-filter.input.js';

/**
 * The repository's filter of the `runs` and `countRuns` argument `filter`.
 * @throws WeftError BAD_USER_INPUT naming `filter.labels.<key>` for labels startRun would refuse
 */
export function runRowFilter(filter: RunFilter | null | undefined): RunRowFilter {
  return {
    status: filter?.status ?? undefined,
    workflowId: filter?.workflowId ?? undefined,
    version: filter?.version ?? undefined,
    createdAfter: filter?.createdAfter ?? undefined,
    createdBefore: filter?.createdBefore ?? undefined,
    scheduleId: filter?.scheduleId ?? undefined,
    labels: filter?.labels == null ? undefined : checkLabels(filter.labels, 'filter.labels'),
    failedNodeId: filter?.failedNodeId ?? undefined,
    errorContains: filter?.errorContains ?? undefined,
    finishedAfter: filter?.finishedAfter ?? undefined,
    finishedBefore: filter?.finishedBefore ?? undefined,
  };
}
