import {
  DEFAULT_CATCH_UP_SECONDS,
  MAX_CATCH_UP_SECONDS,
  MAX_JITTER_SECONDS,
  minFireGapSeconds,
  OverlapPolicy,
  labelProblems,
  SCHEDULE_INPUT_KEY,
  scheduleTimingProblems,
  secondsProblems,
  type Problem,
} from '@weft/engine';
import { describeJsonProblem, jsonProblem } from '@weft/engine/coordinator';
import type { Json, ScheduleFields } from '@weft/persistence';
import type { CreateScheduleInput, ScheduleFieldsInput, UpdateScheduleInput } from './schedule.input.js';

/** The bounds a schedule's fields are checked against, from the configuration. */
export interface ScheduleFieldLimits {
  /** The most bytes of JSON a run's input or config may have. */
  maxInputBytes: number;
  /** WEFT_MIN_SCHEDULE_INTERVAL_SECONDS: the smallest gap a timing may allow between two fires. */
  minIntervalSeconds: number;
}

/**
 * A schedule's stored fields from a create input, or from an update input over the stored
 * `current` fields (an omitted field keeps its value, null clears it; giving `cron` drops the
 * interval and giving `intervalSeconds` drops the cron), with every problem of the result named
 * by its field. A timing that allows fires closer than `limits.minIntervalSeconds` is a problem
 * when it is new (an update that keeps the timing keeps it). Whether the workflow and version
 * exist is checked by the caller.
 */
export function scheduleFields(
  input: CreateScheduleInput | UpdateScheduleInput,
  current: ScheduleFields | undefined,
  limits: ScheduleFieldLimits,
): { fields: ScheduleFields; problems: Problem[] } {
  const { maxInputBytes } = limits;
  const has = (k: keyof ScheduleFieldsInput) => input[k] !== undefined;
  const pick = <K extends keyof ScheduleFieldsInput & keyof ScheduleFields>(k: K, fallback: ScheduleFields[K]): ScheduleFields[K] =>
    has(k) ? ((input[k] ?? null) as ScheduleFields[K]) : current ? current[k] : fallback;
  let cron = pick('cron', null);
  let intervalSeconds = pick('intervalSeconds', null);
  if (current && has('cron') && input.cron !== null && !has('intervalSeconds')) intervalSeconds = null;
  if (current && has('intervalSeconds') && input.intervalSeconds !== null && !has('cron')) cron = null;
  const fields: ScheduleFields = {
    workflowId: input.workflowId ?? current!.workflowId,
    version: pick('version', null),
    cron: cron === null ? null : cron.trim(),
    intervalSeconds,
    timeZone: pick('timeZone', 'UTC') ?? 'UTC',
    input: (has('input') ? (input.input ?? {}) : (current?.input ?? {})) as Json,
    config: (has('config') ? (input.config ?? {}) : (current?.config ?? {})) as Json,
    labels: (has('labels') ? (input.labels ?? {}) : (current?.labels ?? {})) as Record<string, string>,
    startAt: pick('startAt', null),
    endAt: pick('endAt', null),
    jitterSeconds: pick('jitterSeconds', 0) ?? 0,
    note: pick('note', null),
    overlapPolicy: pick('overlapPolicy', OverlapPolicy.Skip) ?? OverlapPolicy.Skip,
    catchUpSeconds: pick('catchUpSeconds', DEFAULT_CATCH_UP_SECONDS) ?? DEFAULT_CATCH_UP_SECONDS,
  };
  const timing = scheduleTimingProblems(fields);
  const problems: Problem[] = [
    ...timing,
    ...gapProblems(fields, current, timing.length === 0 ? limits.minIntervalSeconds : 0),
    ...secondsProblems('jitterSeconds', fields.jitterSeconds, MAX_JITTER_SECONDS),
    ...secondsProblems('catchUpSeconds', fields.catchUpSeconds, MAX_CATCH_UP_SECONDS),
    ...labelProblems(fields.labels),
  ];
  // Every fire starts a run with these: refused here, as startRun would refuse them, not at each fire.
  for (const field of ['input', 'config'] as const) {
    const p = jsonProblem(fields[field], maxInputBytes);
    if (p) problems.push({ path: p.kind === 'unstorable' ? field + p.path.slice(1) : field, message: describeJsonProblem(field, p) });
  }
  if (fields.intervalSeconds != null && fields.intervalSeconds >= 1 && (fields.jitterSeconds ?? 0) > 0 && fields.jitterSeconds! >= fields.intervalSeconds) {
    problems.push({
      path: 'jitterSeconds',
      message: `must be less than intervalSeconds (${fields.intervalSeconds}): a fire delayed past the next one would be counted missed`,
    });
  }
  if (fields.input && typeof fields.input === 'object' && !Array.isArray(fields.input) && SCHEDULE_INPUT_KEY in fields.input) {
    problems.push({ path: `input.${SCHEDULE_INPUT_KEY}`, message: `is reserved: each scheduled run gets input.${SCHEDULE_INPUT_KEY} = {id, nominalTime}` });
  }
  return { fields, problems };
}

/** The timing's problem when it is new and allows two fires closer than `min` seconds (0: no check). */
function gapProblems(f: ScheduleFields, current: ScheduleFields | undefined, min: number): Problem[] {
  if (!(min > 1) || (current && current.cron === f.cron && current.intervalSeconds === f.intervalSeconds)) return [];
  const gap = minFireGapSeconds(f);
  if (gap >= min) return [];
  const path = f.cron !== null ? 'cron' : 'intervalSeconds';
  const what = f.cron !== null ? `fires as little as ${gap} s apart` : `is ${gap} s`;
  return [{ path, message: `${what}; the smallest gap between fires is ${min} s (WEFT_MIN_SCHEDULE_INTERVAL_SECONDS)` }];
}
