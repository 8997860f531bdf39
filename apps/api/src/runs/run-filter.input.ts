import { Field, ID, InputType, Int } from '@nestjs/graphql';
import { IsDate, IsIn, IsInt, IsOptional, IsString, MaxLength, Min } from 'class-validator';
import { RunStatus } from '@weft/engine';
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
}
