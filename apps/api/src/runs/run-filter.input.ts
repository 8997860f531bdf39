import { Field, ID, InputType, Int } from '@nestjs/graphql';
import { IsDate, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, MaxLength, Min } from 'class-validator';
import { RunStatus, type JsonValue } from '@weft/engine';
import { JsonField } from '../common/json.scalar.js';
import { DATE_TIME_MESSAGE, GraphQLDateTime } from '../common/date-time.scalar.js';
import { RunStatusEnum } from '../common/statuses.js';

@InputType()
export class RunFilter {
  @Field(() => RunStatusEnum, { nullable: true })
  @IsOptional()
  @IsIn(Object.values(RunStatus))
  status?: RunStatus | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  workflowId?: string | null;

  @Field(() => Int, { nullable: true, description: 'Runs of this version (of any workflow unless workflowId is given too).' })
  @IsOptional()
  @IsInt()
  @Min(1)
  version?: number | null;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'Runs created at or after this instant.' })
  @IsOptional()
  @IsDate({ message: DATE_TIME_MESSAGE })
  createdAfter?: Date | null;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'Runs created before this instant.' })
  @IsOptional()
  @IsDate({ message: DATE_TIME_MESSAGE })
  createdBefore?: Date | null;

  @Field(() => ID, { nullable: true, description: 'Runs started by this schedule.' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  scheduleId?: string | null;

  @JsonField({ nullable: true, description: 'Runs carrying every one of these labels (a JSON object of string values, as in startRun).' })
  labels?: JsonValue;

  @Field(() => String, { nullable: true, description: 'Runs with a FAILED task (of any attempt or iteration) of this node.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  failedNodeId?: string | null;

  @Field(() => String, { nullable: true, description: 'Runs whose error contains this text, ignoring case; % and _ are plain characters.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(1000)
  errorContains?: string | null;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'Runs that finished at or after this instant (unfinished runs never match).' })
  @IsOptional()
  @IsDate({ message: DATE_TIME_MESSAGE })
  finishedAfter?: Date | null;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'Runs that finished before this instant (unfinished runs never match).' })
  @IsOptional()
  @IsDate({ message: DATE_TIME_MESSAGE })
  finishedBefore?: Date | null;
}
