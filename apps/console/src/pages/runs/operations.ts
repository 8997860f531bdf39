import { RUN_ITEMS_PAGE_MAX } from '@weft/contract';
import { GRAPH_FIELDS } from '../../api/graph.js';

/** The fields of a row of the runs list (also what keeps a row's status comparable by seq). */
const RUN_SUMMARY_FIELDS = /* GraphQL */ `
  fragment RunSummaryFields on Run { id status workflowId version seq createdAt updatedAt finishedAt labels }
`;

/** A page of runs, newest first. */
export const RUNS = /* GraphQL */ `
  query Runs($filter: RunFilter, $first: Int, $after: String) {
    runs(filter: $filter, first: $first, after: $after) {
      edges { cursor node { ...RunSummaryFields } }
      pageInfo { endCursor hasNextPage }
    }
  }
  ${RUN_SUMMARY_FIELDS}
`;

/** Every change of any run of the caller's tenant (new runs included). */
export const RUN_CHANGED = /* GraphQL */ `
  subscription RunChanged {
    runChanged { runId status seq }
  }
`;

/**
 * Tasks and events per page of a run (the API's largest page), the `$page` of the run queries:
 * the run page reads the first page with the run, and the next ones, after the last task's id or
 * event's seq, while a page is full.
 */
export const RUN_PAGE = RUN_ITEMS_PAGE_MAX;

const TASK_FIELDS = /* GraphQL */ `
  fragment TaskFields on Task {
    id nodeId nodeType status attempt iteration loopIteration failedIterations input output error
    createdAt updatedAt finishedAt wakeAt awaitedSignal branches queue waitReason waitDetail
    decision { branches default defaultTaken conditions { to condition value } }
  }
`;
const EVENT_FIELDS = /* GraphQL */ `
  fragment EventFields on RunEvent { seq type nodeId attempt at payload actions ignored error }
`;

/** Everything the run page shows: the query and the subscription ask for exactly these. */
const RUN_DETAIL_FIELDS = /* GraphQL */ `
  fragment RunDetailFields on Run {
    ...RunSummaryFields
    input config output error parentRunId parentTaskId depth scheduleId nominalTime
    priority concurrencyKey waitReason waitDetail pausedAt pauseReason deadlineAt
    tasks(first: $page) { ...TaskFields }
    history(first: $page) { ...EventFields }
    children { id status parentTaskId workflowId }
    graph { ...GraphFields }
  }
  ${RUN_SUMMARY_FIELDS}
  ${TASK_FIELDS}
  ${EVENT_FIELDS}
  ${GRAPH_FIELDS}
`;

/** The page of a run's tasks after the task `after`. */
export const RUN_TASKS_PAGE = /* GraphQL */ `
  query RunTasksPage($id: ID!, $after: ID, $page: Int!) {
    run(id: $id) { id tasks(first: $page, after: $after) { ...TaskFields } }
  }
  ${TASK_FIELDS}
`;

/** The page of a run's history after the event `after` (a seq). */
export const RUN_HISTORY_PAGE = /* GraphQL */ `
  query RunHistoryPage($id: ID!, $after: Int, $page: Int!) {
    run(id: $id) { id history(first: $page, after: $after) { ...EventFields } }
  }
  ${EVENT_FIELDS}
`;

export const RUN = /* GraphQL */ `
  query Run($id: ID!, $page: Int!) {
    run(id: $id) { ...RunDetailFields }
  }
  ${RUN_DETAIL_FIELDS}
`;

export const RUN_UPDATED = /* GraphQL */ `
  subscription RunUpdated($runId: ID!, $page: Int!) {
    runUpdated(runId: $runId) { ...RunDetailFields }
  }
  ${RUN_DETAIL_FIELDS}
`;

/** The definition of a run's version: which nodes are sensitive. */
export const VERSION_DEFINITION = /* GraphQL */ `
  query VersionDefinition($workflowId: String!, $version: Int) {
    workflowVersion(workflowId: $workflowId, version: $version) { workflowId version definition }
  }
`;

export const CANCEL_RUN = /* GraphQL */ `
  mutation CancelRun($input: CancelRunInput!) {
    cancelRun(input: $input) { id status seq error finishedAt }
  }
`;

/** Pauses an active run; the answer carries what the run page shows of a pause. */
export const PAUSE_RUN = /* GraphQL */ `
  mutation PauseRun($input: PauseRunInput!) {
    pauseRun(input: $input) { id status seq pausedAt pauseReason }
  }
`;

export const RESUME_RUN = /* GraphQL */ `
  mutation ResumeRun($input: ResumeRunInput!) {
    resumeRun(input: $input) { id status seq pausedAt pauseReason }
  }
`;

export const RETRY_RUN = /* GraphQL */ `
  mutation RetryRun($input: RetryRunInput!) {
    retryRun(input: $input) { id status seq version }
  }
`;

export const SEND_SIGNAL = /* GraphQL */ `
  mutation SendSignal($input: SendSignalInput!) {
    sendSignal(input: $input) { delivered }
  }
`;

/**
 * One task's attempts with their logs: the page of one task after the task `after` (the one
 * created before it; null for the run's first), so that a panel reads its own task's logs only.
 */
export const TASK_LOGS = /* GraphQL */ `
  query TaskLogs($id: ID!, $after: ID) {
    run(id: $id) { id tasks(first: 1, after: $after) { id attempts { attempt logs startedAt finishedAt error } } }
  }
`;
