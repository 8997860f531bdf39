import { Field, ID, Int, ObjectType } from '@nestjs/graphql';
import type { RunStatus } from '@weft/engine';
import { RunStatusEnum } from '../common/statuses.js';

@ObjectType('RunChange', { description: "A change to one of the tenant's runs: which run, its status and event sequence number after it." })
export class RunChangeObject {
  @Field(() => ID)
  runId: string;

  @Field(() => RunStatusEnum)
  status: RunStatus;

  @Field(() => Int, { description: "The run's seq after the change (Run.seq)." })
  seq: number;
}

/** What `runChanged` yields: the payload's root field. */
export interface RunChangedPayload {
  runChanged: RunChangeObject;
}
