import type { Json } from '../runs/types.js';

/** The schedules pages' GraphQL documents and the shapes of their answers. */

/** ScheduleOverlapPolicy, in the order the form offers them. */
export const OVERLAP_POLICIES = ['SKIP', 'BUFFER_ONE', 'BUFFER_ALL', 'CANCEL_OTHER', 'ALLOW_ALL'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** Nominal fire times that started no run, by reason (ScheduleSkips). */
export interface ScheduleSkips {
  overlap: number;
  missed: number;
  bufferFull: number;
  startFailed: number;
  alreadyFired: number;
}

/** A row of the schedules list. */
export interface ScheduleSummary {
  id: string;
  workflowId: string;
  version: number | null;
  cron: string | null;
  intervalSeconds: number | null;
  timeZone: string;
  overlapPolicy: OverlapPolicy;
  paused: boolean;
  nextFireAt: string | null;
  firedCount: number;
  skipped: ScheduleSkips;
  note: string | null;
}

export interface ScheduleRun {
  id: string;
  status: string;
  nominalTime: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export interface ScheduleBackfill {
  id: string;
  scheduleId: string;
  from: string;
  to: string;
  total: number;
  started: number;
  skipped: number;
  pending: number;
  nextNominalTime: string | null;
  createdAt: string;
  finishedAt: string | null;
}

/** A schedule with everything its page shows. */
export interface ScheduleDetail extends ScheduleSummary {
  input: Json;
  config: Json;
  startAt: string | null;
  endAt: string | null;
  jitterSeconds: number;
  catchUpSeconds: number;
  pauseNote: string | null;
  pausedBy: string | null;
  pausedAt: string | null;
  bufferedTimes: string[];
  lastNominalTime: string | null;
  lastFiredAt: string | null;
  lastRunId: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  upcoming: string[];
  recentRuns: ScheduleRun[];
  backfills: ScheduleBackfill[];
}

export interface SchedulesPage {
  edges: { cursor: string; node: ScheduleSummary }[];
  pageInfo: { endCursor: string | null; hasNextPage: boolean };
}

/** What triggerSchedule answers (ScheduleFire). */
export interface ScheduleFire {
  nominalTime: string;
  outcome: 'STARTED' | 'BUFFERED' | 'SKIPPED';
  reason: string | null;
  run: { id: string; status: string } | null;
  cancelledRunIds: string[];
}

/** How many upcoming fire times the schedule page lists. */
export const UPCOMING_COUNT = 10;

const SUMMARY_FIELDS = `id workflowId version cron intervalSeconds timeZone overlapPolicy paused nextFireAt firedCount note
  skipped { overlap missed bufferFull startFailed alreadyFired }`;
export const BACKFILL_FIELDS = 'id scheduleId from to total started skipped pending nextNominalTime createdAt finishedAt';
const DETAIL_FIELDS = `${SUMMARY_FIELDS}
  input config startAt endAt jitterSeconds catchUpSeconds pauseNote pausedBy pausedAt bufferedTimes
  lastNominalTime lastFiredAt lastRunId lastError createdAt updatedAt
  upcoming(count: ${UPCOMING_COUNT})
  recentRuns(first: 10) { id status nominalTime createdAt finishedAt }
  backfills(first: 10) { ${BACKFILL_FIELDS} }`;

export const SCHEDULES = /* GraphQL */ `
  query Schedules($workflowId: String, $first: Int, $after: String) {
    schedules(workflowId: $workflowId, first: $first, after: $after) {
      edges { cursor node { ${SUMMARY_FIELDS} } }
      pageInfo { endCursor hasNextPage }
    }
  }
`;

export const SCHEDULE = /* GraphQL */ `
  query Schedule($id: ID!) {
    schedule(id: $id) { ${DETAIL_FIELDS} }
  }
`;

export const SCHEDULE_BACKFILL = /* GraphQL */ `
  query ScheduleBackfill($id: ID!) {
    scheduleBackfill(id: $id) { ${BACKFILL_FIELDS} }
  }
`;

/** The workflows a schedule may run (the form's select, the list's filter). */
export const WORKFLOW_IDS = /* GraphQL */ `
  query WorkflowIds {
    workflows { id name latestVersion defaultVersion }
  }
`;

export interface WorkflowChoice {
  id: string;
  name: string | null;
  latestVersion: number;
  defaultVersion: number;
}

export const CREATE_SCHEDULE = /* GraphQL */ `
  mutation CreateSchedule($input: CreateScheduleInput!) {
    createSchedule(input: $input) { ${DETAIL_FIELDS} }
  }
`;

export const UPDATE_SCHEDULE = /* GraphQL */ `
  mutation UpdateSchedule($input: UpdateScheduleInput!) {
    updateSchedule(input: $input) { ${DETAIL_FIELDS} }
  }
`;

export const PAUSE_SCHEDULE = /* GraphQL */ `
  mutation PauseSchedule($id: ID!, $note: String) {
    pauseSchedule(id: $id, note: $note) { ${DETAIL_FIELDS} }
  }
`;

export const UNPAUSE_SCHEDULE = /* GraphQL */ `
  mutation UnpauseSchedule($id: ID!, $note: String) {
    unpauseSchedule(id: $id, note: $note) { ${DETAIL_FIELDS} }
  }
`;

export const TRIGGER_SCHEDULE = /* GraphQL */ `
  mutation TriggerSchedule($id: ID!) {
    triggerSchedule(id: $id) { nominalTime outcome reason run { id status } cancelledRunIds }
  }
`;

export const BACKFILL_SCHEDULE = /* GraphQL */ `
  mutation BackfillSchedule($id: ID!, $from: DateTime!, $to: DateTime!) {
    backfillSchedule(id: $id, from: $from, to: $to) { ${BACKFILL_FIELDS} }
  }
`;

export const DELETE_SCHEDULE = /* GraphQL */ `
  mutation DeleteSchedule($id: ID!) {
    deleteSchedule(id: $id)
  }
`;
