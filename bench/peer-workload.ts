/**
 * The workload every engine of the peers bench runs, the same for all: a chain of
 * {@link CHAIN_STEPS} steps, each one GET to the stub. First a warm-up of {@link WARMUP_RUNS}
 * workflows, {@link IN_FLIGHT} at a time; then {@link IN_FLIGHT} lanes, each starting its next
 * workflow as soon as its previous one ended, read around a window of `seconds` once they have
 * run for a while; then workflows one at a time, alone. Every workflow is recorded (key, phase,
 * wall time, result) for the correctness checks that follow.
 */
import { randomBytes } from 'node:crypto';
import { cpuBetween, readCpu, type ProcessGroups } from './peer-cpu.js';

/** Steps of the workflow. */
export const CHAIN_STEPS = 20;
/** Workflows in flight during the window. */
export const IN_FLIGHT = 8;
/** Workflows of the warm-up, {@link IN_FLIGHT} at a time. */
export const WARMUP_RUNS = 16;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export type Phase = 'warm-up' | 'in flight' | 'alone';

/** One workflow the bench ran. */
export interface WorkflowRecord {
  key: string;
  phase: Phase;
  /** Epoch ms at its start and its end, as the driver saw them. */
  startedAt: number;
  endedAt: number;
  /** What the engine returned: the step bodies in order (undefined when they are read later, as for Weft). */
  bodies?: unknown[];
  /** The engine's own id for it (a Weft run id). */
  ref?: string;
  /** Why it did not end well. */
  error?: string;
}

/** What the bench asks of an engine. */
export interface EngineDriver {
  /** Runs workflow `key` to its end. @throws when it failed or could not be started */
  run(key: string): Promise<{ bodies?: unknown[]; ref?: string }>;
  /** The engine's processes by group, for the CPU readings. */
  processes(): Promise<ProcessGroups>;
  /** Called once after the warm-up (e.g. ANALYZE). */
  afterWarmup?(): Promise<void>;
  /** Called once the in-flight lanes have drained, before the workflows alone. */
  afterWindow?(): Promise<void>;
  /** Throws when the bench must stop (interrupted, a process died). */
  check(): void;
}

/** The workload's figures and records. */
export interface WorkloadResult {
  records: WorkflowRecord[];
  /** The in-flight window: epoch ms bounds and its length (s, from the monotonic clock). */
  window: { from: number; to: number; seconds: number };
  /** CPU seconds over the window by process group. */
  cpu: [string, number][];
  /** Per workflow run alone: its wall time / {@link CHAIN_STEPS} (ms). */
  soloMsPerStep: number[];
}

/** A key prefix unique to this run of the bench, so that keys never collide across engines. */
export function keyPrefix(engine: string): string {
  return `${engine}-${randomBytes(3).toString('hex')}`;
}

/**
 * Runs the workload on `driver`.
 * @param o.seconds the window (s); the lanes run `max(2, seconds × 0.15)` s before it
 * @param o.soloRuns workflows run alone afterwards
 */
export async function runWorkload(
  driver: EngineDriver,
  o: { seconds: number; soloRuns: number; prefix: string; say: (line: string) => void },
): Promise<WorkloadResult> {
  const records: WorkflowRecord[] = [];
  let seq = 0;
  const one = async (phase: Phase): Promise<WorkflowRecord> => {
    const rec: WorkflowRecord = { key: `${o.prefix}-${seq++}`, phase, startedAt: Date.now(), endedAt: 0 };
    records.push(rec);
    const t0 = performance.now();
    try {
      const r = await driver.run(rec.key);
      rec.bodies = r.bodies;
      rec.ref = r.ref;
    } catch (err) {
      rec.error = (err as Error).message;
    }
    rec.endedAt = rec.startedAt + (performance.now() - t0);
    return rec;
  };

  o.say(`warm-up: ${WARMUP_RUNS} workflows, ${IN_FLIGHT} at a time`);
  for (let done = 0; done < WARMUP_RUNS; done += IN_FLIGHT) {
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, WARMUP_RUNS - done) }, () => one('warm-up')));
    driver.check();
  }
  const warmFailed = records.filter((r) => r.error);
  if (warmFailed.length) throw new Error(`${warmFailed.length} of ${WARMUP_RUNS} warm-up workflows failed; the first: ${warmFailed[0].error}`);
  await driver.afterWarmup?.();

  o.say(`${IN_FLIGHT} workflows in flight for ${o.seconds} s`);
  let stopping = false;
  const lanes = Array.from({ length: IN_FLIGHT }, async () => {
    // A lane stops at its first failure: the checks report it; spinning on errors would measure nothing.
    while (!stopping) if ((await one('in flight')).error) return;
  });
  const settle = Math.max(2_000, o.seconds * 150);
  for (const until = Date.now() + settle; Date.now() < until;) {
    driver.check();
    await sleep(100);
  }
  const groupsA = await driver.processes();
  const a = { epoch: Date.now(), mono: performance.now(), cpu: readCpu(groupsA) };
  for (const until = performance.now() + o.seconds * 1000; performance.now() < until;) {
    driver.check();
    await sleep(Math.min(100, Math.max(0, until - performance.now())));
  }
  const b = { epoch: Date.now(), mono: performance.now(), cpu: readCpu(await driver.processes()) };
  stopping = true;
  await Promise.all(lanes);
  driver.check();
  await driver.afterWindow?.();

  o.say(`${o.soloRuns} workflows alone`);
  const soloMsPerStep: number[] = [];
  for (let i = 0; i < o.soloRuns; i++) {
    const r = await one('alone');
    if (!r.error) soloMsPerStep.push((r.endedAt - r.startedAt) / CHAIN_STEPS);
    driver.check();
  }
  return {
    records,
    window: { from: a.epoch, to: b.epoch, seconds: (b.mono - a.mono) / 1000 },
    cpu: cpuBetween(a.cpu, b.cpu),
    soloMsPerStep,
  };
}
