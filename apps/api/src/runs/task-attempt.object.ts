import { Field, Int, ObjectType } from '@nestjs/graphql';
import { GraphQLDateTime } from '../common/date-time.scalar.js';

@ObjectType('TaskAttempt', {
  description:
    "One execution of a worker task (HTTP, CODE) and what it printed or did. The logs are kept when the attempt had any: a CODE attempt's stdout and stderr together (at most 64 KiB, the tail, after a line `… N bytes cut …`), an HTTP attempt's requests (method, url, status or error, duration); a sensitive node's resolved values redacted.",
})
export class TaskAttemptObject {
  @Field(() => Int, { description: 'The attempt, counted from 0 as Task.attempt is: 0 is the first execution.' })
  attempt: number;

  @Field(() => String, { nullable: true, description: 'What the attempt printed or did; null when it recorded nothing.' })
  logs: string | null;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'When the worker began the execution; null for an attempt that recorded no logs.' })
  startedAt: Date | null;

  @Field(() => GraphQLDateTime, {
    nullable: true,
    description: "When the worker ended the execution; for an attempt without logs, the task's finishedAt for its last attempt, else null.",
  })
  finishedAt: Date | null;

  @Field(() => String, {
    nullable: true,
    description: "Why the attempt failed; null when it succeeded. For an attempt without logs, the task's error for its last attempt, else null.",
  })
  error: string | null;
}
