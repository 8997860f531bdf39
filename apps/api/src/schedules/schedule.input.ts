import { Field, ID, InputType, Int, registerEnumType } from '@nestjs/graphql';
import { IsDate, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, MaxLength, Min } from 'class-validator';
import { MAX_SCHEDULE_NOTE_CHARS, OVERLAP_POLICIES, type JsonValue, type OverlapPolicy } from '@weft/engine';
import { DATE_TIME_MESSAGE, GraphQLDateTime } from '../common/date-time.scalar.js';
import { IsJsonObject, JsonField } from '../common/json.scalar.js';

/** The overlap policies as a GraphQL enum: `SKIP` is the stored `skip`, and so on. */
export const ScheduleOverlapPolicyEnum = Object.fromEntries(OVERLAP_POLICIES.map((p) => [p.toUpperCase(), p])) as Record<string, OverlapPolicy>;
registerEnumType(ScheduleOverlapPolicyEnum, {
  name: 'ScheduleOverlapPolicy',
  description:
    "What a fire does while the schedule's previous run is still RUNNING: SKIP it (counted), BUFFER_ONE (keep one, start it when the run ends), BUFFER_ALL (keep all, start them in order), CANCEL_OTHER (cancel the running run, then start), ALLOW_ALL (start beside it).",
});

/** The fields createSchedule and updateSchedule share; on update, an omitted field keeps its value and null clears it. */
@InputType({ isAbstract: true })
export class ScheduleFieldsInput {
  @Field(() => Int, { nullable: true, description: "Pin a version; default (or null): the workflow's default version at each fire." })
  @IsOptional()
  @IsInt()
  @Min(1)
  version?: number | null;

  @Field(() => String, {
    nullable: true,
    description:
      'A cron expression: 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, or @hourly, @daily, @weekly, @monthly, @yearly. Give this or intervalSeconds.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cron?: string | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Fire every this many seconds (at least 1), counted from startAt, else from the creation. Give this or cron.',
  })
  @IsOptional()
  @IsInt()
  intervalSeconds?: number | null;

  @Field(() => String, { nullable: true, description: 'IANA time zone the cron expression is read in (default UTC), e.g. America/New_York.' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  timeZone?: string | null;

  @JsonField({ nullable: true, description: "The runs' input, a JSON object; each run also gets input.schedule = {id, nominalTime}. Default: {}." })
  @IsOptional()
  @IsJsonObject()
  input?: JsonValue;

  @JsonField({ nullable: true, description: "The runs' config, a JSON object. Default: {}." })
  @IsOptional()
  @IsJsonObject()
  config?: JsonValue;

  @JsonField({
    nullable: true,
    description:
      'Labels every run the schedule starts gets: a JSON object of at most 16 labels, keys of 1 to 64 characters of A-Z a-z 0-9 _ . -, string values of at most 256 characters. Default: {}.',
  })
  labels?: JsonValue;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'No fire before this instant.' })
  @IsOptional()
  @IsDate({ message: DATE_TIME_MESSAGE })
  startAt?: Date | null;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'No fire at or after this instant; after startAt.' })
  @IsOptional()
  @IsDate({ message: DATE_TIME_MESSAGE })
  endAt?: Date | null;

  @Field(() => Int, { nullable: true, description: 'Delay each fire by up to this many seconds (default 0), the same delay on every scheduler.' })
  @IsOptional()
  @IsInt()
  jitterSeconds?: number | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_SCHEDULE_NOTE_CHARS)
  note?: string | null;

  @Field(() => ScheduleOverlapPolicyEnum, { nullable: true, description: 'Default SKIP.' })
  @IsOptional()
  @IsIn(OVERLAP_POLICIES)
  overlapPolicy?: OverlapPolicy | null;

  @Field(() => Int, {
    nullable: true,
    description:
      "Fire times missed by at most this many seconds (the scheduler was down) still fire; older ones are skipped. Default 60. The window is never narrower than the scheduler's grace (10 s, or two WEFT_SCHEDULER_INTERVAL_MS if longer), so 0 means no catch-up: a time fires when the scheduler reaches it in its normal course, and is skipped when it came due longer than the grace before.",
  })
  @IsOptional()
  @IsInt()
  catchUpSeconds?: number | null;
}

@InputType()
export class CreateScheduleInput extends ScheduleFieldsInput {
  @Field(() => String)
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  workflowId: string;

  @Field(() => Boolean, { nullable: true, description: 'Create it paused (default false).' })
  @IsOptional()
  paused?: boolean | null;
}

@InputType()
export class UpdateScheduleInput extends ScheduleFieldsInput {
  @Field(() => ID)
  @IsString()
  id: string;

  @Field(() => String, { nullable: true, description: 'Move the schedule to another workflow of the tenant.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  workflowId?: string | null;
}
