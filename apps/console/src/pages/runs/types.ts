import type {
  EventFieldsFragment,
  RunChangedSubscription,
  RunDetailFieldsFragment,
  RunSummaryFieldsFragment,
  RunsQuery,
  TaskFieldsFragment,
  TaskLogsQuery,
} from '../../api/generated/graphql.js';

/** Run statuses (RunStatus). */
export const RUN_STATUSES = ['QUEUED', 'PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export type { Json } from '../../api/json.js';

/** The shapes of the run pages' answers, generated from their operations (./operations.ts). */

/** A row of the runs list. */
export type RunSummary = RunSummaryFieldsFragment;
export type RunsPage = RunsQuery['runs'];
/** What `runChanged` says about any run of the tenant. */
export type RunChange = RunChangedSubscription['runChanged'];
export type Task = TaskFieldsFragment;
export type RunEvent = EventFieldsFragment;
/** A run with everything its page shows. */
export type RunDetail = RunDetailFieldsFragment;
export type ChildRun = RunDetail['children'][number];
/** One execution of a worker task and what it printed or did (TaskAttempt); `attempt` counts from 0, as the API does. */
export type TaskAttempt = NonNullable<TaskLogsQuery['run']>['tasks'][number]['attempts'][number];
