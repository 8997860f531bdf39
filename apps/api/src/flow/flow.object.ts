import { Field, Int, ObjectType } from '@nestjs/graphql';
import { GraphQLDateTime } from '../common/date-time.scalar.js';
import { PageInfo } from '../runs/run.object.js';

@ObjectType('ConcurrencyKey', { description: "A concurrency group of the caller's tenant: how many of its runs hold a slot and how many wait for one." })
export class ConcurrencyKeyObject {
  @Field(() => String, { description: '`workflow`: the runs of one workflow with this key; `tenant`: the runs of every workflow of the tenant with this key.' })
  scope: string;

  @Field(() => String, { nullable: true, description: 'The workflow of a workflow-scoped group; null for a tenant-scoped one.' })
  workflowId: string | null;

  @Field(() => String, { description: 'The key as the run start resolved it; "" for a workflow whose concurrency has no key (one group).' })
  key: string;

  @Field(() => Int, { description: 'At most this many runs of the group are RUNNING at once (the limit of the version last admitted).' })
  limit: number;

  @Field(() => Int, { description: 'Runs of the group RUNNING now.' })
  active: number;

  @Field(() => Int, { description: 'Runs of the group QUEUED for a slot.' })
  queued: number;
}

@ObjectType('ConcurrencyKeyEdge')
export class ConcurrencyKeyEdge {
  @Field(() => String)
  cursor: string;

  @Field(() => ConcurrencyKeyObject)
  node: ConcurrencyKeyObject;
}

@ObjectType('ConcurrencyKeyConnection')
export class ConcurrencyKeyConnection {
  @Field(() => [ConcurrencyKeyEdge])
  edges: ConcurrencyKeyEdge[];

  @Field(() => PageInfo)
  pageInfo: PageInfo;
}

@ObjectType('RateLimit', { description: "A rate key of the caller's tenant: its sliding window and the attempts it holds back." })
export class RateLimitObject {
  @Field(() => String, { description: "The rate key as the node's rate_limit.key resolved it." })
  key: string;

  @Field(() => Int, { nullable: true, description: 'Starts allowed per window, from the most recent task with the key; null when no such task is left.' })
  limit: number | null;

  @Field(() => Int, { nullable: true, description: 'The window in seconds, from the same task.' })
  perSeconds: number | null;

  @Field(() => Int, { description: 'Attempts started within the last perSeconds seconds (the database clock).' })
  startedInWindow: number;

  @Field(() => Int, { description: 'Attempts waiting in the backlog for the window to open (Task.waitReason RATE_LIMIT).' })
  held: number;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'When the first held attempt may start; null when none is held.' })
  nextStartAt: Date | null;
}
