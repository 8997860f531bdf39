import { Field, GraphQLISODateTime, InputType } from '@nestjs/graphql';
import { IsDate, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { RunStatus } from '@weft/engine';
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

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'Runs created at or after this instant.' })
  @IsOptional()
  @IsDate()
  createdAfter?: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'Runs created before this instant.' })
  @IsOptional()
  @IsDate()
  createdBefore?: Date | null;
}
