import { Field, InputType } from '@nestjs/graphql';
import { Type } from 'class-transformer';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { RunFilter } from '../runs/run-filter.input.js';
import { BatchActionEnum } from './run-batch.object.js';

@InputType({ description: 'A bulk action over the runs `filter` matches now.' })
export class CreateRunBatchInput {
  @Field(() => BatchActionEnum)
  @IsIn(Object.values(BatchActionEnum), { message: `action must be one of ${Object.values(BatchActionEnum).join(', ')}` })
  action: keyof typeof BatchActionEnum;

  @Field(() => RunFilter, { description: 'The runs to act on (at least one condition; at most 100,000 runs may match).' })
  @ValidateNested()
  @Type(() => RunFilter)
  filter: RunFilter;

  @Field(() => String, { nullable: true, description: 'RETRY only, required there: the node each run is retried from.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  fromNodeId?: string | null;

  @Field(() => String, { nullable: true, description: 'The reason of each CANCEL, PAUSE or RESUME (at most 2,000 characters).' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  reason?: string | null;

  @Field(() => String, { nullable: true, description: 'A key already used by a batch of the tenant returns that batch, creating nothing.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  idempotencyKey?: string | null;
}
