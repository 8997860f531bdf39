import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { publish, startE2E, type E2E } from '../support/e2e-platform.js';

/**
 * Every-second schedules on a whole platform (API, worker, scheduler polling every 50 ms) on the
 * real clock: a schedule without catch-up fires under the scheduler's ordinary lag, and note-only
 * updates hammered while the scheduler fires never move the next fire time back (which would fire
 * a nominal time twice and skip it as `already_fired`). Waits are for conditions, never times.
 */

const FIELDS = `id nextFireAt firedCount skipped { overlap missed bufferFull startFailed alreadyFired }`;

interface Seen {
  id: string;
  nextFireAt: string | null;
  firedCount: number;
  skipped: { overlap: number; missed: number; bufferFull: number; startFailed: number; alreadyFired: number };
}

let e2e: E2E;
let admin: WeftClient;

const create = (i: Record<string, unknown>): Promise<Seen> =>
  admin.request(`mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { ${FIELDS} } }`, { i }).then((r) => r.createSchedule);
const read = (id: string): Promise<Seen> => admin.request(`query($id: ID!) { schedule(id: $id) { ${FIELDS} } }`, { id }).then((r) => r.schedule);

/** Reads the schedule until `done` holds, for at most 30 s of tries; returns the last reading. */
async function until(id: string, done: (s: Seen) => boolean): Promise<Seen> {
  for (let i = 0; ; i++) {
    const s = await read(id);
    if (done(s) || i >= 600) return s;
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  e2e = await startE2E({ WEFT_MIN_SCHEDULE_INTERVAL_SECONDS: 1 });
  ({ client: admin } = await e2e.tenant('schedule-clock'));
  // A FORK alone completes as the run starts: a run that needs no worker.
  await publish(admin, 'tick', { nodes: [{ node_id: 'a', type: 'FORK' }], edges: [] });
}, 60_000);
afterAll(async () => {
  await e2e?.close();
});

describe('an every-second schedule on the real clock', () => {
  it('fires each time of a schedule without catch-up (catchUpSeconds 0) as the scheduler reaches it, missing none', async () => {
    const s = await create({ workflowId: 'tick', intervalSeconds: 1, catchUpSeconds: 0, overlapPolicy: 'ALLOW_ALL' });
    const seen = await until(s.id, (x) => x.firedCount >= 5 || x.skipped.missed >= 5);
    await admin.request(`mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: s.id });
    expect(seen.skipped.missed).toBe(0);
    expect(seen.firedCount).toBeGreaterThanOrEqual(5);
  });

  it('keeps its next fire time through note-only updates hammered while it fires: no time fires twice, none is skipped', async () => {
    const s = await create({ workflowId: 'tick', intervalSeconds: 1, overlapPolicy: 'ALLOW_ALL' });
    // One update after another, until at least 6 fires went by (and at most 3,000 updates).
    let fired = 0;
    for (let n = 0; n < 3_000 && (fired < 6 || n < 200); n++) {
      const u: Seen = (
        await admin.request(`mutation($i: UpdateScheduleInput!) { updateSchedule(input: $i) { ${FIELDS} } }`, { i: { id: s.id, note: `update ${n}` } })
      ).updateSchedule;
      fired = u.firedCount;
    }
    const after = await until(s.id, (x) => x.firedCount >= fired + 2);
    await admin.request(`mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: s.id });
    expect(after.skipped).toEqual({ overlap: 0, missed: 0, bufferFull: 0, startFailed: 0, alreadyFired: 0 });
    expect(after.firedCount).toBeGreaterThanOrEqual(8);
  });
});
