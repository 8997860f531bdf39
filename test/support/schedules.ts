import { v7 as uuidv7 } from 'uuid';
import type { DataSource } from 'typeorm';
import { firstFire } from '@weft/engine';
import { RunRepository, ScheduleBackfillRepository, ScheduleRepository, sql, withTenant, type ScheduleFields, type ScheduleRow } from '@weft/persistence';
import { fireTimesBetween } from '@weft/engine';
import { RunCoordinator, timingOf, type RunCoordinatorOptions } from '@weft/engine/coordinator';
import { createTenant, def, fork, ManualClock, MemoryLogger, publishWorkflow, RecordingDispatcher, RecordingPublisher, waitFor } from './builders.js';

/** A schedule's fields with the API's defaults for all but `f`. */
export function scheduleFields(workflowId: string, f: Partial<ScheduleFields> = {}): ScheduleFields {
  return {
    workflowId,
    version: null,
    cron: null,
    intervalSeconds: null,
    timeZone: 'UTC',
    input: {},
    config: {},
    labels: {},
    startAt: null,
    endAt: null,
    jitterSeconds: 0,
    note: null,
    overlapPolicy: 'skip',
    catchUpSeconds: 60,
    ...f,
  };
}

/** Inserts a schedule of `workflowId` as the API would (defaults as the API's), created at `now`, first fire after it. */
export async function insertSchedule(ds: DataSource, tenantId: string, workflowId: string, f: Partial<ScheduleFields>, now: Date): Promise<ScheduleRow> {
  const id = uuidv7();
  const fields = scheduleFields(workflowId, f);
  const next = firstFire({ ...fields, anchor: now }, id, now, fields.jitterSeconds);
  return new ScheduleRepository(ds).insert(tenantId, id, fields, next, now);
}

/** Inserts a backfill of `schedule` over `[from, to]`, as the API would. */
export async function insertBackfill(ds: DataSource, schedule: ScheduleRow, from: Date, to: Date, now: Date) {
  const times = fireTimesBetween({ ...timingOf(schedule), startAt: null, endAt: null, anchor: schedule.startAt ?? schedule.createdAt }, from, to, 10_000);
  return new ScheduleBackfillRepository(ds).insert(schedule.tenantId, {
    id: uuidv7(),
    scheduleId: schedule.id,
    fromTime: from,
    toTime: to,
    total: times.length,
    first: times[0] ?? null,
    now,
  });
}

/** The runs of a schedule, oldest nominal time first: id, status and nominal time (ISO). */
export async function runsOfSchedule(
  ds: DataSource,
  tenantId: string,
  scheduleId: string,
): Promise<{ id: string; status: string; nominal: string; input: any }[]> {
  const r = await withTenant(ds, tenantId, (m) =>
    sql<{ id: string; status: string; nominal_time: Date; input: any }>(
      m,
      `SELECT id, status, nominal_time, input FROM runs WHERE tenant_id = $1 AND schedule_id = $2 ORDER BY nominal_time, id`,
      [tenantId, scheduleId],
    ),
  );
  return r.rows.map((x) => ({ id: x.id, status: x.status, nominal: x.nominal_time.toISOString(), input: x.input }));
}

/** The schedule as stored now. */
export async function scheduleRow(ds: DataSource, tenantId: string, id: string): Promise<ScheduleRow> {
  return (await new ScheduleRepository(ds).find(tenantId, id))!;
}

export { RunRepository };

/**
 * A schedule room over `ds`: a tenant, a hand-moved clock from `start`, a coordinator on them, an
 * instant workflow (ends at its start) and a held one (waits for signal `go`); `poll` fires what is
 * due until a pass finds less than a full batch, `release` sends a held run its signal.
 */
export async function scheduleRoom(ds: DataSource, start = '2030-01-01T00:00:00.000Z', opts: RunCoordinatorOptions = {}) {
  const { tenantId } = await createTenant(ds);
  const clock = new ManualClock(start);
  const coordinator = new RunCoordinator(ds, new RecordingDispatcher(), new RecordingPublisher(), { now: clock.now, logger: new MemoryLogger(), ...opts });
  const instant = (await publishWorkflow(ds, tenantId, def([fork('a')]))).workflowId;
  const held = (await publishWorkflow(ds, tenantId, def([waitFor('w', 'go')]))).workflowId;
  const poll = async (c = coordinator) => {
    let n = 0;
    for (let k = 200; k === 200;) n += k = await c.schedules.fireDue(200);
    return n;
  };
  const release = (runId: string) => coordinator.runs.sendSignal(tenantId, { runId, name: 'go' });
  return { tenantId, clock, coordinator, instant, held, poll, release };
}
