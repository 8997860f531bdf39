import { Field, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import type { BatchAction, BatchOutcome, BatchStatus } from '@weft/persistence';
import { GraphQLJSON } from '../common/json.scalar.js';
import { GraphQLDateTime } from '../common/date-time.scalar.js';
import { PageInfo } from '../runs/run.object.js';

export const BatchActionEnum = { CANCEL: 'CANCEL', RETRY: 'RETRY', PAUSE: 'PAUSE', RESUME: 'RESUME' } as const;
export const BatchStatusEnum = { RUNNING: 'RUNNING', COMPLETED: 'COMPLETED', STOPPED: 'STOPPED' } as const;
export const BatchOutcomeEnum = { PENDING: 'PENDING', APPLIED: 'APPLIED', SKIPPED: 'SKIPPED', FAILED: 'FAILED' } as const;

registerEnumType(BatchActionEnum, {
  name: 'RunBatchAction',
  description: 'What a bulk action does to each of its runs.',
  valuesMap: {
    CANCEL: { description: 'cancelRun (with the batch reason).' },
    RETRY: { description: 'retryRun from the batch fromNodeId.' },
    PAUSE: { description: 'pauseRun (with the batch reason as the pause reason).' },
    RESUME: { description: 'resumeRun.' },
  },
});
registerEnumType(BatchStatusEnum, {
  name: 'RunBatchStatus',
  description: 'RUNNING until every run was acted on (COMPLETED) or stopRunBatch stopped it (STOPPED).',
});
registerEnumType(BatchOutcomeEnum, {
  name: 'RunBatchOutcome',
  description:
    'What came of one run: PENDING (not acted on yet), APPLIED, SKIPPED (the action did not apply to it: error says why) or FAILED (error says why).',
});

@ObjectType('RunBatchItem', { description: 'One run of a bulk action and what came of it.' })
export class RunBatchItemObject {
  @Field(() => ID)
  runId: string;

  @Field(() => BatchOutcomeEnum)
  outcome: BatchOutcome;

  @Field(() => String, { nullable: true, description: 'Why the run was SKIPPED or FAILED; null otherwise.' })
  error: string | null;
}

@ObjectType('RunBatchItemEdge')
export class RunBatchItemEdge {
  @Field(() => String)
  cursor: string;

  @Field(() => RunBatchItemObject)
  node: RunBatchItemObject;
}

@ObjectType('RunBatchItemConnection')
export class RunBatchItemConnection {
  @Field(() => [RunBatchItemEdge])
  edges: RunBatchItemEdge[];

  @Field(() => PageInfo)
  pageInfo: PageInfo;
}

@ObjectType('RunBatch', {
  description:
    'A bulk action over the runs a filter matched when it was created (at most 100,000, oldest first), each acted on once, at most WEFT_BATCH_RUNS_PER_SECOND runs a second, by the scheduler.',
})
export class RunBatchObject {
  /** The owning tenant (items are read with it). Not exposed. */
  tenantId: string;

  @Field(() => ID)
  id: string;

  @Field(() => BatchActionEnum)
  action: BatchAction;

  @Field(() => BatchStatusEnum)
  status: BatchStatus;

  @Field(() => GraphQLJSON, { description: 'The filter as given at creation.' })
  filter: Record<string, unknown>;

  @Field(() => String, { nullable: true })
  fromNodeId: string | null;

  @Field(() => String, { nullable: true })
  reason: string | null;

  @Field(() => String, { nullable: true })
  idempotencyKey: string | null;

  @Field(() => Int, { description: 'How many runs the filter matched at creation: the runs the batch acts on.' })
  total: number;

  @Field(() => Int)
  applied: number;

  @Field(() => Int)
  skipped: number;

  @Field(() => Int)
  failed: number;

  @Field(() => GraphQLDateTime)
  createdAt: Date;

  @Field(() => GraphQLDateTime)
  updatedAt: Date;

  @Field(() => GraphQLDateTime, { nullable: true })
  finishedAt: Date | null;
}

@ObjectType('RunBatchEdge')
export class RunBatchEdge {
  @Field(() => String)
  cursor: string;

  @Field(() => RunBatchObject)
  node: RunBatchObject;
}

@ObjectType('RunBatchConnection')
export class RunBatchConnection {
  @Field(() => [RunBatchEdge])
  edges: RunBatchEdge[];

  @Field(() => PageInfo)
  pageInfo: PageInfo;
}
