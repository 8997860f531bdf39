import { Inject, Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import {
  backfillCount,
  firstFire,
  fireTimesBetween,
  MAX_BACKFILL_FIRES,
  MAX_SCHEDULE_NOTE_CHARS,
  nextFireTime,
  upcomingFireTimes,
  WeftError,
  type JsonValue,
  type OverlapPolicy,
  type Problem,
} from '@weft/engine';
import type { GraphQLResolveInfo } from 'graphql';
import { ScheduleFires, timingOf } from '@weft/engine/coordinator';
import { SCHEDULES_PAGE_DEFAULT, SCHEDULES_PAGE_MAX, UPCOMING_MAX } from '@weft/contract';
import {
  isUuid,
  RunRepository,
  ScheduleBackfillRepository,
  ScheduleRepository,
  VersionLookupRepository,
  type BackfillRow,
  type ScheduleFields,
  type ScheduleRow,
} from '@weft/persistence';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import type { Principal } from '../auth/principal.js';
import { responseScope } from '../runs/response-budget.js';
import { toRunObject } from '../runs/run.mapper.js';
import type { RunObject } from '../runs/run.object.js';
import { scheduleFields, type ScheduleFieldLimits } from './schedule-fields.js';
import type { CreateScheduleInput, UpdateScheduleInput } from './schedule.input.js';
import type { ScheduleBackfillObject, ScheduleConnection, ScheduleFireObject, ScheduleObject } from './schedule.object.js';

/** Fire times computed between two turns of the event loop while a backfill's range is counted. */
const FIRE_TIMES_PER_TURN = 250;

/**
 * {@link fireTimesBetween} in slices of {@link FIRE_TIMES_PER_TURN}, yielding to the event loop
 * between them: counting a large range with a zoned cron takes a second or more, which must not
 * stall every other request of this process meanwhile.
 */
async function countedFireTimes(t: Parameters<typeof fireTimesBetween>[0], from: Date, to: Date, limit: number): Promise<Date[]> {
  const out: Date[] = [];
  let cursor = from;
  for (;;) {
    const slice = fireTimesBetween(t, cursor, to, FIRE_TIMES_PER_TURN - 1);
    out.push(...slice);
    if (slice.length < FIRE_TIMES_PER_TURN || out.length > limit) return out;
    cursor = new Date(slice.at(-1)!.getTime() + 1);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * Schedules over the API: management through the schedule repositories, fires (trigger) through
 * the coordinator's schedule room, so a trigger follows the same overlap policy and transaction
 * as the scheduler's fires. Another tenant's schedule, an unknown id and an id that is not a UUID
 * are all WeftError NOT_FOUND.
 */
@Injectable()
export class SchedulesService {
  constructor(
    private readonly schedules: ScheduleRepository,
    private readonly backfills: ScheduleBackfillRepository,
    private readonly versions: VersionLookupRepository,
    private readonly runs: RunRepository,
    private readonly fires: ScheduleFires,
    @Inject(WEFT_CONFIG) private readonly config: WeftConfig,
  ) {}

  private get limits(): ScheduleFieldLimits {
    return { maxInputBytes: this.fires.maxInputBytes, minIntervalSeconds: this.config.minScheduleIntervalSeconds };
  }

  /** The schedule's input or config for the answer `info` belongs to, its size charged to that answer's budget (WEFT_MAX_RESPONSE_BYTES). */
  storedValue(context: object, info: GraphQLResolveInfo, s: ScheduleObject, column: 'input' | 'config'): JsonValue {
    const budget = responseScope(context, info, this.config.maxResponseBytes).budget;
    budget.charge(column === 'input' ? s.inputBytes : s.configBytes);
    return s[column];
  }

  async get(p: Principal, id: string): Promise<ScheduleObject> {
    return toScheduleObject(await this.row(p.tenantId, id));
  }

  async list(
    p: Principal,
    workflowId: string | null | undefined,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<ScheduleConnection> {
    const n = first ?? SCHEDULES_PAGE_DEFAULT;
    if (!Number.isInteger(n) || n < 1 || n > SCHEDULES_PAGE_MAX) throw badInput('first', `must be between 1 and ${SCHEDULES_PAGE_MAX}`);
    if (after != null && !isUuid(after)) throw badInput('after', 'is not a cursor of this list (an endCursor of a previous page)');
    const rows = await this.schedules.list(p.tenantId, { workflowId: workflowId ?? undefined, first: n, after: after ?? undefined });
    const page = rows.slice(0, n).map(toScheduleObject);
    return {
      edges: page.map((node) => ({ cursor: node.id, node })),
      pageInfo: { hasNextPage: rows.length > n, hasPreviousPage: false, startCursor: page[0]?.id ?? null, endCursor: page[page.length - 1]?.id ?? null },
    };
  }

  /**
   * @throws WeftError BAD_USER_INPUT naming each field (bad cron, unknown zone, fires closer than
   * WEFT_MIN_SCHEDULE_INTERVAL_SECONDS, end before start, unknown workflow or version, a deprecated
   * pinned version), or naming `input` when the tenant holds WEFT_MAX_SCHEDULES_PER_TENANT schedules.
   */
  async create(p: Principal, input: CreateScheduleInput): Promise<ScheduleObject> {
    const { fields, problems } = scheduleFields(input, undefined, this.limits);
    const now = await this.checkWorkflow(p.tenantId, fields, problems);
    const id = uuidv7();
    const max = this.config.maxSchedulesPerTenant;
    const made = await this.schedules.insertWithin(p.tenantId, max, id, fields, firstFire({ ...fields, anchor: now }, id, now, fields.jitterSeconds), now);
    if ('full' in made)
      throw badInput('input', `would be schedule ${made.full + 1} of the tenant; it may hold at most ${max} (WEFT_MAX_SCHEDULES_PER_TENANT): delete one first`);
    const row = made.row;
    if (!input.paused) return toScheduleObject(row);
    return this.setPaused(p, id, true, null);
  }

  /**
   * Changes the given fields; a change of timing computes the next fire time again from now. The
   * fields are merged again over the row locked as the scheduler's fire locks it, so an update
   * waits for a fire under way and never writes back a next fire time the fire moved on from (that
   * time would fire again, skipped as `already_fired`), nor the fields another update just changed.
   * Errors as {@link create}, and NOT_FOUND.
   */
  async update(p: Principal, input: UpdateScheduleInput): Promise<ScheduleObject> {
    const current = await this.row(p.tenantId, input.id);
    const { fields, problems } = scheduleFields(input, current, this.limits);
    await this.checkWorkflow(p.tenantId, fields, problems);
    const row = await this.schedules.update(p.tenantId, current.id, (locked, now) => {
      const merged = scheduleFields(input, locked, this.limits);
      if (merged.problems.length > 0) throw problemsError(merged.problems);
      const f = merged.fields;
      const retimed = (['cron', 'intervalSeconds', 'timeZone', 'startAt', 'endAt', 'jitterSeconds'] as const).some((k) => String(f[k]) !== String(locked[k]));
      const next = retimed
        ? firstFire({ ...f, anchor: locked.createdAt }, locked.id, now, f.jitterSeconds)
        : { fireAt: locked.nextFireAt, dueAt: locked.nextDueAt };
      return { fields: f, next };
    });
    if (!row) throw notFound(input.id);
    return toScheduleObject(row);
  }

  /**
   * Pauses (`paused`) or unpauses the schedule with `note`, recording the caller's key name;
   * unpausing fires nothing that came due while paused.
   * @throws WeftError NOT_FOUND; BAD_USER_INPUT for a note over MAX_SCHEDULE_NOTE_CHARS.
   */
  async setPaused(p: Principal, id: string, paused: boolean, note: string | null): Promise<ScheduleObject> {
    const current = await this.row(p.tenantId, id);
    if (note !== null && note.length > MAX_SCHEDULE_NOTE_CHARS) throw badInput('note', `must be at most ${MAX_SCHEDULE_NOTE_CHARS} characters`);
    const by = await this.schedules.keyName(p.tenantId, p.keyId);
    // From the row as it stands once locked: an update of its timing under way has committed by then.
    const next = (locked: ScheduleRow, now: Date) => firstFire({ ...timingOf(locked) }, locked.id, now, locked.jitterSeconds);
    const row = await this.schedules.setPaused(p.tenantId, current.id, { paused, note, by, ...(paused ? {} : { next }) });
    if (!row) throw notFound(id);
    return toScheduleObject(row);
  }

  async trigger(p: Principal, id: string): Promise<ScheduleFireObject> {
    if (!isUuid(id)) throw notFound(id);
    const out = await this.fires.trigger(p.tenantId, id);
    const run = out.runId ? await this.runs.findRun(p.tenantId, out.runId) : null;
    return {
      nominalTime: out.nominalTime,
      outcome: out.outcome,
      reason: out.reason ?? null,
      run: run ? toRunObject(run) : null,
      cancelledRunIds: out.cancelled ?? [],
    };
  }

  /**
   * A backfill of every nominal time of the schedule in `[from, to]` (at most
   * {@link MAX_BACKFILL_FIRES}), fired by the scheduler under the overlap policy. The count is
   * bounded by arithmetic first ({@link backfillCount}): a range that holds too many times by its
   * bounds is refused without computing one, and no range costs more than the cap's worth of times.
   * @throws WeftError BAD_USER_INPUT (`to` before `from`, too many times), NOT_FOUND; CONFLICT when
   * the tenant holds WEFT_MAX_ACTIVE_BACKFILLS_PER_TENANT unfinished backfills.
   */
  async backfill(p: Principal, id: string, from: Date, to: Date): Promise<ScheduleBackfillObject> {
    const s = await this.row(p.tenantId, id);
    if (to.getTime() < from.getTime()) throw badInput('to', `must not be before from (${from.toISOString()})`);
    const timing = { ...timingOf(s), startAt: null, endAt: null, anchor: s.startAt ?? s.createdAt };
    const tooMany = () => badInput('to', `the range holds more than ${MAX_BACKFILL_FIRES} fire times; backfill it in parts`);
    const count = backfillCount(timing, from, to, MAX_BACKFILL_FIRES);
    let total: number;
    let first: Date | null;
    if (count.kind === 'over') throw tooMany();
    if (count.kind === 'exact') {
      total = count.total;
      first = total > 0 ? nextFireTime(timing, new Date(from.getTime() - 1)) : null;
    } else {
      const times = await countedFireTimes(timing, from, to, count.limit);
      if (times.length > MAX_BACKFILL_FIRES) throw tooMany();
      total = times.length;
      first = times[0] ?? null;
    }
    const now = await this.schedules.dbNow(p.tenantId);
    const max = this.config.maxActiveBackfillsPerTenant;
    // A range without a time is finished at once, so it never counts against the cap.
    const made = await this.backfills.insertWithin(p.tenantId, first ? max : Infinity, {
      id: uuidv7(),
      scheduleId: s.id,
      fromTime: from,
      toTime: to,
      total,
      first,
      now,
    });
    if ('full' in made) {
      throw new WeftError(
        'CONFLICT',
        `the tenant has ${made.full} unfinished backfills, the most it may have at once (WEFT_MAX_ACTIVE_BACKFILLS_PER_TENANT = ${max}): wait for one to finish, or delete its schedule`,
      );
    }
    return toBackfillObject(made.row);
  }

  async backfillById(p: Principal, id: string): Promise<ScheduleBackfillObject> {
    const b = await this.backfills.find(p.tenantId, id);
    if (!b) throw new WeftError('NOT_FOUND', isUuid(id) ? `backfill ${id} not found` : 'backfill not found');
    return toBackfillObject(b);
  }

  /** Deletes the schedule and its backfills; its runs stay (and keep their scheduleId). Returns its id. */
  async delete(p: Principal, id: string): Promise<string> {
    if (!(await this.schedules.delete(p.tenantId, id))) throw notFound(id);
    return id.toLowerCase();
  }

  /** The schedule's newest runs, at most `first` (1…100). */
  async recentRuns(s: ScheduleObject, first: number): Promise<RunObject[]> {
    if (!Number.isInteger(first) || first < 1 || first > 100) throw badInput('first', 'must be between 1 and 100');
    const page = await this.runs.listRuns(s.tenantId, { scheduleId: s.id }, first);
    return page.edges.map((e) => toRunObject(e.node));
  }

  /** The next `count` nominal fire times (1…{@link UPCOMING_MAX}), from the stored next one; fewer when the schedule ends. */
  upcoming(s: ScheduleObject, count: number): Date[] {
    if (!Number.isInteger(count) || count < 1 || count > UPCOMING_MAX) throw badInput('count', `must be between 1 and ${UPCOMING_MAX}`);
    if (!s.nextFireAt) return [];
    const timing = timingOf(s);
    return [s.nextFireAt, ...upcomingFireTimes(timing, s.nextFireAt, count - 1)];
  }

  async backfillsOf(s: ScheduleObject, first: number): Promise<ScheduleBackfillObject[]> {
    if (!Number.isInteger(first) || first < 1 || first > 100) throw badInput('first', 'must be between 1 and 100');
    return (await this.backfills.ofSchedule(s.tenantId, s.id, first)).map(toBackfillObject);
  }

  private async row(tenantId: string, id: string): Promise<ScheduleRow> {
    const row = await this.schedules.find(tenantId, id);
    if (!row) throw notFound(id);
    return row;
  }

  /** Adds the workflow's and version's problems to `problems`, throws them all, else returns the database's now. */
  private async checkWorkflow(tenantId: string, f: ScheduleFields, problems: Problem[]): Promise<Date> {
    const choice = await this.versions.choose(tenantId, f.workflowId, f.version ?? undefined);
    if (!choice?.latestVersion) problems.unshift({ path: 'workflowId', message: `workflow ${f.workflowId} not found` });
    else if (choice.version === null) problems.unshift({ path: 'version', message: `workflow ${f.workflowId} has no version ${f.version}` });
    else if (f.version !== null && choice.deprecated)
      problems.unshift({ path: 'version', message: `workflow ${f.workflowId} version ${f.version} is deprecated: new runs on it are refused` });
    if (problems.length > 0) throw problemsError(problems);
    return choice!.dbNow;
  }
}

function problemsError(problems: Problem[]): WeftError {
  return new WeftError('BAD_USER_INPUT', problems.map((q) => `${q.path}: ${q.message}`).join('; '), problems);
}

function toScheduleObject(r: ScheduleRow): ScheduleObject {
  return { ...r, input: r.input as never, config: r.config as never, overlapPolicy: r.overlapPolicy as OverlapPolicy };
}

function toBackfillObject(b: BackfillRow): ScheduleBackfillObject {
  return {
    id: b.id,
    scheduleId: b.scheduleId,
    from: b.fromTime,
    to: b.toTime,
    total: b.total,
    started: b.started,
    skipped: b.skipped,
    pending: Math.max(0, b.total - b.started - b.skipped),
    nextNominalTime: b.nextNominal,
    createdAt: b.createdAt,
    finishedAt: b.finishedAt,
  };
}

function notFound(id: string): WeftError {
  return new WeftError('NOT_FOUND', isUuid(id) ? `schedule ${id} not found` : 'schedule not found');
}

function badInput(path: string, message: string): WeftError {
  return new WeftError('BAD_USER_INPUT', `${path} ${message}`, [{ path, message }]);
}
