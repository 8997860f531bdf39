import type { RunFilterInput } from '../runs/filters.js';

/** Most runs one batch may act on (createRunBatch refuses more; the schema's words, not exported by @weft/contract). */
export const BATCH_RUNS_MAX = 100_000;
/** Longest reason createRunBatch takes. */
export const BATCH_REASON_MAX = 2000;

export type BatchAction = 'CANCEL' | 'RETRY' | 'PAUSE' | 'RESUME';

/** What each action does to a run, in the order the form offers them. */
export const BATCH_ACTIONS: readonly { action: BatchAction; verb: string; says: string }[] = [
  { action: 'PAUSE', verb: 'Pause', says: 'pause each active run (nothing new is dispatched until it is resumed)' },
  { action: 'RESUME', verb: 'Resume', says: 'resume each paused run' },
  { action: 'CANCEL', verb: 'Cancel', says: 'cancel each run that has not ended' },
  { action: 'RETRY', verb: 'Retry', says: 'retry each ended run from one node' },
];

/** "Pause" for PAUSE, the action itself for one this console does not know. */
export function actionVerb(action: string): string {
  return BATCH_ACTIONS.find((a) => a.action === action)?.verb ?? action;
}

/** `1 run` / `3 runs` (`n` with thousands separators). */
export function runsWord(n: number): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? 'run' : 'runs'}`;
}

/** The createRunBatch input a confirmed form asks for, or what is missing from it. */
export interface BatchDraft {
  action: BatchAction;
  reason: string;
  fromNodeId: string;
}

export interface CreateRunBatchInput {
  action: BatchAction;
  filter: RunFilterInput;
  reason?: string;
  fromNodeId?: string;
  idempotencyKey: string;
}

/**
 * The input for createRunBatch: the reason (trimmed) only for CANCEL, PAUSE and RESUME, the node
 * (trimmed) only for RETRY, where it is required. `idempotencyKey` is the form's own, so a
 * confirmation sent twice (a double click, a retried request) makes one batch.
 */
export function batchInput(
  draft: BatchDraft,
  filter: RunFilterInput,
  idempotencyKey: string,
): { input: CreateRunBatchInput; problem: null } | { input: null; problem: string } {
  const input: CreateRunBatchInput = { action: draft.action, filter, idempotencyKey };
  if (draft.action === 'RETRY') {
    const node = draft.fromNodeId.trim();
    if (!node) return { input: null, problem: 'A retry needs the node each run is retried from.' };
    input.fromNodeId = node;
  } else {
    const reason = draft.reason.trim();
    if (reason.length > BATCH_REASON_MAX) return { input: null, problem: `The reason is ${reason.length} characters; at most ${BATCH_REASON_MAX} are kept.` };
    if (reason) input.reason = reason;
  }
  return { input, problem: null };
}

/**
 * Why no bulk action is offered for the list's filter, or null when one is: an empty filter
 * would act on every run of the tenant, and the API refuses it.
 */
export function bulkRefusal(filtered: boolean, filterProblem: string | null): string | null {
  if (filterProblem) return `Fix the filter first: ${filterProblem}`;
  if (!filtered) return 'A bulk action acts on the runs the filter matches; set a filter first (an empty filter would match every run).';
  return null;
}

/** Why the matched runs cannot be acted on in one batch, or null. */
export function countRefusal(count: number): string | null {
  if (count === 0) return 'No runs match this filter: there is nothing to act on.';
  if (count > BATCH_RUNS_MAX) return `${runsWord(count)} match; one bulk action takes at most ${runsWord(BATCH_RUNS_MAX)}. Narrow the filter.`;
  return null;
}

/** A batch's counts, as the progress bar and its text read them. */
export interface BatchCounts {
  total: number;
  applied: number;
  skipped: number;
  failed: number;
}

/** The runs not acted on yet (never negative). */
export function pendingOf(b: BatchCounts): number {
  return Math.max(0, b.total - b.applied - b.skipped - b.failed);
}

/** `3 of 4 done: 2 applied, 1 skipped, 0 failed, 1 pending`. */
export function progressWords(b: BatchCounts): string {
  const done = b.applied + b.skipped + b.failed;
  return `${done.toLocaleString('en-US')} of ${runsWord(b.total)} done: ${b.applied} applied, ${b.skipped} skipped, ${b.failed} failed, ${pendingOf(b)} pending`;
}

/** A fresh idempotency key (a random UUID; from getRandomValues where randomUUID is missing, as on plain http). */
export function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
