import { Field, InputType } from '@nestjs/graphql';
import { IsDate, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
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

  @Field(() => GraphQLDateTime, { nullable: true, description: 'Runs created at or after this instant.' })
  @IsOptional()
  @IsDate({ message: DATE_TIME_MESSAGE })
  createdAfter?: Date | null;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'Runs created before this instant.' })
  @IsOptional()
  @IsDate({ message: DATE_TIME_MESSAGE })
  createdBefore?: Date | null;
}
