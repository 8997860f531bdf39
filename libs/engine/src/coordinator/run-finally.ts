/**
 * The coordinator's side of a definition's `finally` step: the decided outcome on the run row
 * (`decided_status`, `decided_error`, `decided_output`, written by a DecideRun, cleared by the
 * FinishRun that follows once the step ended) and back in the machine's snapshot.
 */
import { RunPauseRepository, type RunPatch, type RunState, type Transaction } from '@weft/persistence';
import type { Action, DecideRun, DecidedOutcome, JsonValue, RunStatus } from '../index.js';

/** The run row's decided-outcome columns. */
type DecidedColumns = Pick<RunState, 'decidedStatus' | 'decidedError' | 'decidedOutput'>;

/** The patch of a run that finished: no outcome is decided any more. */
export const UNDECIDED: RunPatch = { decidedStatus: null, decidedError: null, decidedOutput: null };

/**
 * Writes DecideRun `a` of run `runId`: the run patch recording the outcome (the run stays
 * RUNNING). A paused run runs again, as its finally step must be dispatched: its held backlog rows
 * (of tasks the same event cancelled) are dropped and its pause cleared.
 */
export async function decideRun(m: Transaction, tenantId: string, runId: string, a: DecideRun, paused: boolean, now: Date): Promise<RunPatch> {
  if (paused) await new RunPauseRepository(m).dropHolds(tenantId, runId, now);
  return {
    decidedStatus: a.status,
    decidedError: a.reason ?? null,
    decidedOutput: a.output === undefined ? null : a.output,
    ...(paused ? { pausedAt: null, pauseReason: null } : {}),
  };
}

/** The decided outcome stored on run row `run`, as the machine's snapshot holds it (nothing when none is). */
export function decidedOf(run: DecidedColumns): { decided?: DecidedOutcome } {
  if (run.decidedStatus == null) return {};
  return {
    decided: {
      status: run.decidedStatus as RunStatus,
      ...(run.decidedError != null ? { reason: run.decidedError } : {}),
      ...(run.decidedOutput != null ? { output: run.decidedOutput as JsonValue } : {}),
    },
  };
}

/** The decided-outcome columns of run row `run` once `actions` are written (for the row kept in memory). */
export function decidedAfter(run: DecidedColumns, actions: readonly Action[]): DecidedColumns {
  let cols: DecidedColumns = { decidedStatus: run.decidedStatus, decidedError: run.decidedError, decidedOutput: run.decidedOutput };
  for (const a of actions) {
    if (a.type === 'DecideRun') cols = { decidedStatus: a.status, decidedError: a.reason ?? null, decidedOutput: a.output ?? null };
    else if (a.type === 'FinishRun' || a.type === 'ReopenRun') cols = { decidedStatus: null, decidedError: null, decidedOutput: null };
  }
  return cols;
}
