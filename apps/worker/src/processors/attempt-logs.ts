import type { TaskJob } from '@weft/engine';
import type { AttemptLogInput } from '@weft/engine/coordinator';
import type { AttemptLog } from '../executors/attempt-log.js';
import { redactLog } from './redact-inputs.js';

/**
 * The logs an attempt's report carries: what its executor recorded, a sensitive node's with every
 * resolved input value redacted ({@link redactLog}, as its errors are), with the worker's clock
 * around the execution; undefined when nothing was recorded (the report then writes no logs).
 */
export function attemptLogOf(job: TaskJob, log: AttemptLog, startedAt: Date, finishedAt: Date): AttemptLogInput | undefined {
  if (log.empty) return undefined;
  const text = job.sensitive ? log.render((t, cutAtStart) => redactLog(t, job.input, cutAtStart)) : log.render();
  return text === '' ? undefined : { text, startedAt, finishedAt };
}
