/**
 * What one engine's run of the peers bench hands to the report: a plain JSON object, so that the
 * drivers of the peers (separate processes, built apart) can write it to a file and the
 * orchestrator read it back.
 */
import { writeFileSync } from 'node:fs';
import type { WorkloadResult } from './peer-workload.js';

export interface EngineResult {
  /** e.g. `Restate`, `DBOS`, `Weft (processes)`. */
  engine: string;
  /** Versions of what ran, e.g. `restate-server 1.7.12, @restatedev/restate-sdk 1.14.5`. */
  version: string;
  /** How it ran: processes, network, client (one line each). */
  setup: string[];
  /** Its durability settings as found, each with where it was found. */
  durability: string[];
  /** Anything odd seen while it ran. */
  notes: string[];
  /** Length of the in-flight window (s). */
  windowSeconds: number;
  /** Steps the engine's own store shows completed in the window. */
  windowSteps: number;
  /** How {@link windowSteps} was counted. */
  windowStepsSource: string;
  /** GETs the stub answered in the window (a cross-check of {@link windowSteps}). */
  stubHitsInWindow: number;
  /** Per workflow run alone: wall time / steps (ms). */
  soloMsPerStep: number[];
  /** CPU seconds over the window by process group, in report order. */
  cpu: [string, number][];
  /** Workflows run (warm-up, window and alone). */
  workflows: number;
  /** What the correctness checks covered, one line each. */
  checks: string[];
  /** Every problem found; empty when the engine ran correctly. */
  problems: string[];
  /** The 1-minute load average before and after the engine ran (set by the orchestrator). */
  load?: [number, number];
}

/** The fields every engine fills the same way from its workload. */
export function fromWorkload(w: WorkloadResult): Pick<EngineResult, 'windowSeconds' | 'soloMsPerStep' | 'cpu' | 'workflows'> {
  return { windowSeconds: w.window.seconds, soloMsPerStep: w.soloMsPerStep, cpu: w.cpu, workflows: w.records.length };
}

/** Writes `r` as JSON to `file` (a driver's result). */
export function writeResult(file: string, r: EngineResult): void {
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
}

/** An engine that could not run: no figures, the reason as its problem. */
export function failedResult(engine: string, reason: string): EngineResult {
  return {
    engine,
    version: 'n/a',
    setup: [],
    durability: [],
    notes: [],
    windowSeconds: NaN,
    windowSteps: NaN,
    windowStepsSource: '',
    stubHitsInWindow: NaN,
    soloMsPerStep: [],
    cpu: [],
    workflows: 0,
    checks: [],
    problems: [`did not run to the end: ${reason}`],
  };
}

/**
 * Runs a peer driver's `main` and exits: 0 when it resolved, 130 when it was interrupted, else 1
 * with the error on stderr, prefixed by `label`.
 */
export function runDriver(label: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      if (err instanceof Error && err.message === 'interrupted') process.exit(130);
      process.stderr.write(`${label}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
