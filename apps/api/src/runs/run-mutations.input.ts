import { Field, ID, InputType, Int } from '@nestjs/graphql';
import { IsBoolean, IsInt, IsNotEmpty, IsOptional, IsString, MaxLength, Min } from 'class-validator';
import type { JsonValue } from '@weft/engine';
import { IsJsonObject, JsonField } from '../common/json.scalar.js';

// Run ids are not validated here (beyond the storable check every string gets): an id that is
// not a UUID answers NOT_FOUND, like a foreign one.

@InputType()
export class StartRunInput {
  @Field(() => String)
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  workflowId: string;

  @Field(() => Int, {
    nullable: true,
    description: "Default: the workflow's default version (the pinned one, else the latest). A deprecated version is refused.",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  version?: number | null;

  @JsonField({ nullable: true, description: 'A JSON object; templates read it as input.x. Default: {}.' })
  @IsOptional()
  @IsJsonObject()
  input?: JsonValue;

  @JsonField({ nullable: true, description: 'A JSON object; templates read it as config.x. Default: {}.' })
  @IsOptional()
  @IsJsonObject()
  config?: JsonValue;

  @Field(() => String, { nullable: true, description: "Start here instead of the definition's entry node." })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  startNodeId?: string | null;

  @Field(() => String, { nullable: true, description: 'A repeated key returns the run it first started.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  idempotencyKey?: string | null;

  @Field(() => Int, {
    nullable: true,
    description: "Dispatch priority of the run's tasks among the tenant's waiting tasks, 1 (first) to 5. Default: the definition's priority, else 3.",
  })
  priority?: number | null;

  @JsonField({
    nullable: true,
    description:
      'Labels to find the run by, a JSON object of at most 16 labels, keys of 1 to 64 characters of A-Z a-z 0-9 _ . -, string values of at most 256 characters; set at the start, never changed, not passed to child runs. Default: {}.',
  })
  labels?: JsonValue;
}

@InputType()
export class SendSignalInput {
  @Field(() => ID)
  @IsString()
  runId: string;

  @Field(() => String)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;

  @JsonField({ nullable: true })
  payload?: JsonValue;
}

@InputType()
export class CancelRunInput {
  @Field(() => ID)
  @IsString()
  runId: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  reason?: string | null;
}

@InputType({ description: 'Pauses an active run: nothing of it is dispatched until resumeRun.' })
export class PauseRunInput {
  @Field(() => ID)
  @IsString()
  runId: string;

  @Field(() => String, { nullable: true, description: 'Kept as the run\'s pauseReason and in its history (default "paused"); at most 2,000 characters.' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  reason?: string | null;
}

@InputType({ description: 'Resumes a paused run.' })
export class ResumeRunInput {
  @Field(() => ID)
  @IsString()
  runId: string;

  @Field(() => String, { nullable: true, description: "Kept in the run's history; at most 2,000 characters." })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  reason?: string | null;
}

@InputType()
export class RetryRunInput {
  @Field(() => ID)
  @IsString()
  runId: string;

  @Field(() => String)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  fromNodeId: string;

  @Field(() => Int, { nullable: true, description: "Default: the run's version." })
  @IsOptional()
  @IsInt()
  @Min(1)
  version?: number | null;

  @JsonField({ nullable: true, description: "A JSON object. Default: the run's input." })
  @IsOptional()
  @IsJsonObject()
  input?: JsonValue;

  @JsonField({ nullable: true, description: "A JSON object. Default: the run's config." })
  @IsOptional()
  @IsJsonObject()
  config?: JsonValue;

  @Field(() => Boolean, {
    nullable: true,
    description:
      'fromNodeId is a for_each node: run again only its FAILED, SKIPPED and CANCELLED iterations (new attempts with the inputs resolved originally; the array is not resolved again), keep its COMPLETED ones and their outputs, and reset its descendants. BAD_USER_INPUT for a node without for_each or without such an iteration. Default false.',
  })
  @IsOptional()
  @IsBoolean()
  failedIterationsOnly?: boolean | null;
}
