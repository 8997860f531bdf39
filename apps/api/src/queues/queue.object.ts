import { Field, Float, ID, Int, ObjectType } from '@nestjs/graphql';
import { GraphQLDateTime } from '../common/date-time.scalar.js';

@ObjectType('Worker', { description: 'A live worker process: it heartbeated within its last three intervals.' })
export class WorkerObject {
  @Field(() => ID, { description: 'The UUIDv7 the worker chose when it started.' })
  id: string;

  @Field(() => String, {
    nullable: true,
    description: "Always null: the operator's host names are not shown to tenants (operators see them with `weft admin workers`).",
  })
  host: string | null;

  @Field(() => Int, {
    nullable: true,
    description: "Always null: the operator's process ids are not shown to tenants (operators see them with `weft admin workers`).",
  })
  pid: number | null;

  @Field(() => String, { description: 'The Weft version it runs.' })
  version: string;

  @Field(() => [String], { description: 'The queues it consumes that this tenant may use, by name.' })
  queues: string[];

  @Field(() => Int, { description: 'Jobs it runs at once per queue.' })
  concurrency: number;

  @Field(() => GraphQLDateTime, { description: 'When it registered, on the database clock.' })
  startedAt: Date;

  @Field(() => GraphQLDateTime, { description: 'Its last heartbeat (every 5 s by default), on the database clock.' })
  lastHeartbeatAt: Date;

  @Field(() => GraphQLDateTime, {
    nullable: true,
    description: 'When it began draining (it stopped taking jobs and will exit once those it holds finish or are handed back); null while it takes jobs.',
  })
  drainingSince: Date | null;
}

@ObjectType('Queue', { description: "A queue as the caller's tenant sees it: counts over its own tasks only, and the live workers serving it." })
export class QueueObject {
  @Field(() => String, { description: "The queue's name, as a node's `queue` names it (lower case), or a runtime's default (http, python, js)." })
  name: string;

  @Field(() => Int, { description: "The tenant's tasks waiting for a worker: dispatched, due, not running yet." })
  backlog: number;

  @Field(() => Int, { description: "The tenant's tasks a worker is executing." })
  running: number;

  @Field(() => Int, { description: "The tenant's tasks dispatched but not due yet (a retry's backoff)." })
  delayed: number;

  @Field(() => Float, {
    nullable: true,
    description: "How long the tenant's longest-waiting task in the backlog has waited, in milliseconds; null without backlog.",
  })
  oldestPendingAgeMs: number | null;

  @Field(() => Boolean, { description: 'True when an operator reserved the queue for some tenants; see allowed.' })
  reserved: boolean;

  @Field(() => Boolean, {
    description:
      "False when the queue is reserved for other tenants: the tenant's tasks on it (from a version published before the reservation) fail without running, and publishing a definition naming it is refused.",
  })
  allowed: boolean;

  @Field(() => [WorkerObject], { description: 'The live workers consuming the queue (none: its tasks wait until one starts).' })
  workers: WorkerObject[];
}
