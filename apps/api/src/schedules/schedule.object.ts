import { Field, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import type { JsonValue, OverlapPolicy } from '@weft/engine';
import { GraphQLDateTime } from '../common/date-time.scalar.js';
import { GraphQLJSON } from '../common/json.scalar.js';
import { PageInfo } from '../runs/run.object.js';
import { RunObject } from '../runs/run.object.js';
import { ScheduleOverlapPolicyEnum } from './schedule.input.js';

export const ScheduleFireOutcomeEnum = { STARTED: 'started', BUFFERED: 'buffered', SKIPPED: 'skipped' } as const;
registerEnumType(ScheduleFireOutcomeEnum, { name: 'ScheduleFireOutcome', description: 'What became of one nominal fire time.' });

@ObjectType('ScheduleSkips', { description: 'Nominal fire times of a schedule that started no run, by reason.' })
export class ScheduleSkipsObject {
  @Field(() => Int, { description: 'The previous run was still RUNNING under SKIP.' })
  overlap: number;
  @Field(() => Int, { description: 'Due longer ago than the catch-up window (the scheduler was down).' })
  missed: number;
  @Field(() => Int, { description: 'BUFFER_ONE kept one already (or BUFFER_ALL its maximum).' })
  bufferFull: number;
  @Field(() => Int, { description: 'The run could not start; lastError says why.' })
  startFailed: number;
  @Field(() => Int, { description: 'A run for that nominal time existed already (a backfill over fired times).' })
  alreadyFired: number;
}

@ObjectType('Schedule', { description: 'Runs of a workflow started by the clock: a cron expression in a time zone, or a fixed interval.' })
export class ScheduleObject {
  /** The owning tenant, for the field resolvers. Not exposed. */
  tenantId: string;
  @Field(() => ID)
  id: string;
  @Field(() => String)
  workflowId: string;
  @Field(() => Int, { nullable: true, description: "The pinned version; null runs the workflow's default version at each fire." })
  version: number | null;
  @Field(() => String, { nullable: true })
  cron: string | null;
  @Field(() => Int, { nullable: true })
  intervalSeconds: number | null;
  @Field(() => String)
  timeZone: string;
  /** input and config (GraphQL fields resolved by SchedulesResolver, which charges their sizes to the answer). */
  input: JsonValue;
  config: JsonValue;
  inputBytes: number;
  configBytes: number;
  @Field(() => GraphQLJSON, { description: 'The labels every run the schedule starts gets ({} for none).' })
  labels: Record<string, string>;
  @Field(() => GraphQLDateTime, { nullable: true })
  startAt: Date | null;
  @Field(() => GraphQLDateTime, { nullable: true })
  endAt: Date | null;
  @Field(() => Int)
  jitterSeconds: number;
  @Field(() => String, { nullable: true })
  note: string | null;
  @Field(() => ScheduleOverlapPolicyEnum)
  overlapPolicy: OverlapPolicy;
  @Field(() => Int)
  catchUpSeconds: number;
  @Field(() => Boolean)
  paused: boolean;
  @Field(() => String, { nullable: true, description: 'The note of the last pause or unpause.' })
  pauseNote: string | null;
  @Field(() => String, { nullable: true, description: 'The name of the API key that last paused or unpaused the schedule.' })
  pausedBy: string | null;
  @Field(() => GraphQLDateTime, { nullable: true })
  pausedAt: Date | null;
  @Field(() => GraphQLDateTime, { nullable: true, description: 'The next nominal fire time (it fires up to jitterSeconds later); null when none is left.' })
  nextFireAt: Date | null;
  @Field(() => [GraphQLDateTime], { description: 'Nominal times kept by BUFFER_ONE / BUFFER_ALL, oldest first.' })
  bufferedTimes: Date[];
  @Field(() => Int, { description: 'Runs started, by the clock, the buffer, backfills and triggers.' })
  firedCount: number;
  @Field(() => ScheduleSkipsObject)
  skipped: ScheduleSkipsObject;
  @Field(() => GraphQLDateTime, { nullable: true })
  lastNominalTime: Date | null;
  @Field(() => GraphQLDateTime, { nullable: true })
  lastFiredAt: Date | null;
  @Field(() => ID, { nullable: true })
  lastRunId: string | null;
  @Field(() => String, { nullable: true, description: 'Why the last run that should have started could not; null once one started.' })
  lastError: string | null;
  @Field(() => GraphQLDateTime)
  createdAt: Date;
  @Field(() => GraphQLDateTime)
  updatedAt: Date;
}

@ObjectType('ScheduleEdge')
export class ScheduleEdge {
  @Field(() => String)
  cursor: string;
  @Field(() => ScheduleObject)
  node: ScheduleObject;
}

@ObjectType('ScheduleConnection')
export class ScheduleConnection {
  @Field(() => [ScheduleEdge])
  edges: ScheduleEdge[];
  @Field(() => PageInfo)
  pageInfo: PageInfo;
}

@ObjectType('ScheduleFire', { description: 'What a trigger did: the nominal time, and the run started, or why none was.' })
export class ScheduleFireObject {
  @Field(() => GraphQLDateTime)
  nominalTime: Date;
  @Field(() => ScheduleFireOutcomeEnum)
  outcome: string;
  @Field(() => String, { nullable: true, description: 'Why it was skipped: overlap, buffer_full, start_failed or already_fired.' })
  reason: string | null;
  @Field(() => RunObject, { nullable: true, description: 'The run started (or, for already_fired, the run that exists).' })
  run: RunObject | null;
  @Field(() => [ID], { description: 'Runs cancelled first (CANCEL_OTHER).' })
  cancelledRunIds: string[];
}

@ObjectType('ScheduleBackfill', { description: 'A tracked batch firing each nominal time of a range under the overlap policy, oldest first.' })
export class ScheduleBackfillObject {
  @Field(() => ID)
  id: string;
  @Field(() => ID)
  scheduleId: string;
  @Field(() => GraphQLDateTime)
  from: Date;
  @Field(() => GraphQLDateTime)
  to: Date;
  @Field(() => Int, { description: 'Nominal times in the range.' })
  total: number;
  @Field(() => Int)
  started: number;
  @Field(() => Int)
  skipped: number;
  @Field(() => Int, { description: 'Neither started nor skipped yet.' })
  pending: number;
  @Field(() => GraphQLDateTime, { nullable: true, description: 'The next nominal time to fire; null once finished.' })
  nextNominalTime: Date | null;
  @Field(() => GraphQLDateTime)
  createdAt: Date;
  @Field(() => GraphQLDateTime, { nullable: true })
  finishedAt: Date | null;
}
