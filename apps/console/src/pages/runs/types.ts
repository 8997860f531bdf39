import type {
  EventFieldsFragment,
  RunChangedSubscription,
  RunDetailFieldsFragment,
  RunSummaryFieldsFragment,
  RunsQuery,
  RunStatus as ApiRunStatus,
  TaskFieldsFragment,
  TaskLogsQuery,
} from '../../api/generated/graphql.js';

/** A run's status (RunStatus). */
export type RunStatus = ApiRunStatus;

/** Every RunStatus in the order a run meets them: a status the schema gains and this misses does not compile. */
const IN_ORDER: Record<RunStatus, true> = {
  QUEUED: true,
  PENDING: true,
  RUNNING: true,
  PAUSED: true,
  SUCCEEDED: true,
  FAILED: true,
  CANCELLED: true,
  TIMED_OUT: true,
};
/** The run statuses, for the runs list's status filter. */
export const RUN_STATUSES = Object.keys(IN_ORDER) as readonly RunStatus[];

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
