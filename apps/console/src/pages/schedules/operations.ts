import type {
  ScheduleBackfillFieldsFragment,
  ScheduleDetailFieldsFragment,
  ScheduleSummaryFieldsFragment,
  SchedulesQuery,
  TriggerScheduleMutation,
  WorkflowIdsQuery,
} from '../../api/generated/graphql.js';

/** The schedules pages' GraphQL documents and the shapes of their answers (generated from them). */

/** ScheduleOverlapPolicy, in the order the form offers them. */
export const OVERLAP_POLICIES = ['SKIP', 'BUFFER_ONE', 'BUFFER_ALL', 'CANCEL_OTHER', 'ALLOW_ALL'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** A row of the schedules list. */
export type ScheduleSummary = ScheduleSummaryFieldsFragment;
/** Nominal fire times that started no run, by reason (ScheduleSkips). */
export type ScheduleSkips = ScheduleSummary['skipped'];
/** A schedule with everything its page shows. */
export type ScheduleDetail = ScheduleDetailFieldsFragment;
export type ScheduleRun = ScheduleDetail['recentRuns'][number];
export type ScheduleBackfill = ScheduleBackfillFieldsFragment;
export type SchedulesPage = SchedulesQuery['schedules'];
/** What triggerSchedule answers (ScheduleFire). */
export type ScheduleFire = TriggerScheduleMutation['triggerSchedule'];
export type WorkflowChoice = WorkflowIdsQuery['workflows'][number];

const SUMMARY_FIELDS = /* GraphQL */ `
  fragment ScheduleSummaryFields on Schedule {
    id workflowId version cron intervalSeconds timeZone overlapPolicy paused nextFireAt firedCount note
    skipped { overlap missed bufferFull startFailed alreadyFired }
  }
`;
const BACKFILL_FIELDS = /* GraphQL */ `
  fragment ScheduleBackfillFields on ScheduleBackfill {
    id scheduleId from to total started skipped pending nextNominalTime createdAt finishedAt
  }
`;
/** A schedule's page: the next 10 fire times, the 10 latest runs and backfills. */
const DETAIL_FIELDS = /* GraphQL */ `
  fragment ScheduleDetailFields on Schedule {
    ...ScheduleSummaryFields
    input config startAt endAt jitterSeconds catchUpSeconds pauseNote pausedBy pausedAt bufferedTimes
    lastNominalTime lastFiredAt lastRunId lastError createdAt updatedAt
    upcoming(count: 10)
    recentRuns(first: 10) { id status nominalTime createdAt finishedAt }
    backfills(first: 10) { ...ScheduleBackfillFields }
  }
  ${SUMMARY_FIELDS}
  ${BACKFILL_FIELDS}
`;

export const SCHEDULES = /* GraphQL */ `
  query Schedules($workflowId: String, $first: Int, $after: String) {
    schedules(workflowId: $workflowId, first: $first, after: $after) {
      edges { cursor node { ...ScheduleSummaryFields } }
      pageInfo { endCursor hasNextPage }
    }
  }
  ${SUMMARY_FIELDS}
`;

export const SCHEDULE = /* GraphQL */ `
  query Schedule($id: ID!) {
    schedule(id: $id) { ...ScheduleDetailFields }
  }
  ${DETAIL_FIELDS}
`;

export const SCHEDULE_BACKFILL = /* GraphQL */ `
  query ScheduleBackfill($id: ID!) {
    scheduleBackfill(id: $id) { ...ScheduleBackfillFields }
  }
  ${BACKFILL_FIELDS}
`;

/** The workflows a schedule may run (the form's select, the list's filter). */
export const WORKFLOW_IDS = /* GraphQL */ `
  query WorkflowIds {
    workflows { id name latestVersion defaultVersion }
  }
`;

export const CREATE_SCHEDULE = /* GraphQL */ `
  mutation CreateSchedule($input: CreateScheduleInput!) {
    createSchedule(input: $input) { ...ScheduleDetailFields }
  }
  ${DETAIL_FIELDS}
`;

export const UPDATE_SCHEDULE = /* GraphQL */ `
  mutation UpdateSchedule($input: UpdateScheduleInput!) {
    updateSchedule(input: $input) { ...ScheduleDetailFields }
  }
  ${DETAIL_FIELDS}
`;

export const PAUSE_SCHEDULE = /* GraphQL */ `
  mutation PauseSchedule($id: ID!, $note: String) {
    pauseSchedule(id: $id, note: $note) { ...ScheduleDetailFields }
  }
  ${DETAIL_FIELDS}
`;

export const UNPAUSE_SCHEDULE = /* GraphQL */ `
  mutation UnpauseSchedule($id: ID!, $note: String) {
    unpauseSchedule(id: $id, note: $note) { ...ScheduleDetailFields }
  }
  ${DETAIL_FIELDS}
`;

export const TRIGGER_SCHEDULE = /* GraphQL */ `
  mutation TriggerSchedule($id: ID!) {
    triggerSchedule(id: $id) { nominalTime outcome reason run { id status } cancelledRunIds }
  }
`;

export const BACKFILL_SCHEDULE = /* GraphQL */ `
  mutation BackfillSchedule($id: ID!, $from: DateTime!, $to: DateTime!) {
    backfillSchedule(id: $id, from: $from, to: $to) { ...ScheduleBackfillFields }
  }
  ${BACKFILL_FIELDS}
`;

export const DELETE_SCHEDULE = /* GraphQL */ `
  mutation DeleteSchedule($id: ID!) {
    deleteSchedule(id: $id)
  }
`;
