import { EXIT } from '../exit-codes.js';
import { cell, clip, fields, table, when } from './output.js';

/** What every `batch` command reads of a bulk action (every field of the API's RunBatch but its items). */
export const BATCH_FIELDS = /* GraphQL */ `
  fragment RunBatchFields on RunBatch {
    id action status filter fromNodeId reason idempotencyKey total applied skipped failed createdAt updatedAt finishedAt
  }
`;

/** A bulk action's counters and state, as the views read them. */
export interface BatchCounts {
  id: string;
  action: string;
  status: string;
  total: number;
  applied: number;
  skipped: number;
  failed: number;
}

/** A bulk action as `describe` prints it. */
export interface BatchDetail extends BatchCounts {
  filter: unknown;
  fromNodeId?: string | null;
  reason?: string | null;
  idempotencyKey?: string | null;
  createdAt: string;
  finishedAt?: string | null;
}

/** One run of a bulk action and what came of it. */
export interface BatchItem {
  runId: string;
  outcome: string;
  error?: string | null;
}

/** The actions `weft batch` takes, as its subcommands name them, and the API's values. */
export const BATCH_ACTIONS = { cancel: 'CANCEL', retry: 'RETRY', pause: 'PAUSE', resume: 'RESUME' } as const;

/** A subcommand of {@link BATCH_ACTIONS}. */
export type BatchVerb = keyof typeof BATCH_ACTIONS;

/** Longest error shown in a table cell; `-o json|yaml` carry them whole. */
const ERROR_CELL_CHARS = 200;

/** `1 run` or `3 runs`. */
export function runsText(n: number): string {
  return `${n.toLocaleString('en-US')} run${n === 1 ? '' : 's'}`;
}

/** What `batch VERB` says before it asks: `3 runs match the filter now` (`no run matches …` for 0). */
export function matchLine(count: number): string {
  return count === 0 ? 'no run matches the filter now\n' : `${runsText(count)} ${count === 1 ? 'matches' : 'match'} the filter now\n`;
}

/** The question `batch VERB` asks on a terminal: `pause 3 runs? [y/N] `. */
export function confirmQuestion(verb: BatchVerb, count: number): string {
  return `${verb} ${runsText(count)}? [y/N] `;
}

/** True for an answer that confirms (`y`, `yes`, in any case, around spaces); anything else declines. */
export function confirmed(answer: string): boolean {
  return /^\s*y(es)?\s*$/i.test(answer);
}

/** Why `batch VERB` does nothing without a terminal and without `--yes`. */
export function refusalMessage(verb: BatchVerb, count: number): string {
  return `${verb} ${runsText(count)}: stdin is not a terminal, so there is no one to confirm; give --yes to act without asking`;
}

/** What `batch VERB` prints of the batch it created: `batch ID created: PAUSE of 3 runs`. */
export function createdLine(b: BatchCounts): string {
  return `batch ${b.id} created: ${b.action} of ${runsText(b.total)}\n`;
}

/**
 * One line of progress: `batch ID RUNNING: 2 applied, 1 skipped, 0 failed of 5` (what `--watch`
 * prints at each change, and `stop` once stopped).
 */
export function progressLine(b: BatchCounts): string {
  return `batch ${b.id} ${b.status}: ${b.applied} applied, ${b.skipped} skipped, ${b.failed} failed of ${b.total}\n`;
}

/** True once a bulk action acts on no more runs (COMPLETED or STOPPED). */
export function isFinished(b: Pick<BatchCounts, 'status'>): boolean {
  return b.status !== 'RUNNING';
}

/**
 * The exit code of a watched bulk action that finished: {@link EXIT}.runNotSucceeded (3) when a
 * run FAILED or it was STOPPED before acting on every run, else {@link EXIT}.ok. SKIPPED runs (the
 * action did not apply, e.g. pausing a run that has ended) do not count as failures.
 */
export function batchExitCode(b: BatchCounts): number {
  return b.failed > 0 || b.status === 'STOPPED' ? EXIT.runNotSucceeded : EXIT.ok;
}

/**
 * The runs of a bulk action that were not APPLIED, as people read them: a table of the SKIPPED and
 * FAILED runs with why (errors escaped and cut), then how many are PENDING (a stopped batch's runs
 * never acted on). Empty when every run was APPLIED.
 */
export function notAppliedText(items: readonly BatchItem[]): string {
  const shown = items.filter((i) => i.outcome === 'SKIPPED' || i.outcome === 'FAILED');
  const pending = items.filter((i) => i.outcome === 'PENDING').length;
  let out =
    shown.length === 0
      ? ''
      : table(
          ['RUN', 'OUTCOME', 'ERROR'],
          shown.map((i) => [i.runId, i.outcome, clip(cell(i.error), ERROR_CELL_CHARS)]),
        );
  if (pending > 0) out += `${runsText(pending)} PENDING: not acted on\n`;
  return out;
}

/** The filter of a bulk action as one line: `status=RUNNING labels={"team":"pay"}`, keys as the API names them. */
export function filterText(filter: unknown): string {
  if (!filter || typeof filter !== 'object') return cell(filter);
  const parts = Object.entries(filter)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return parts.length === 0 ? '-' : cell(parts.join(' '));
}

/** The table of `batch list`: id, action, status, total, applied, skipped, failed, created. */
export function batchListTable(batches: readonly (BatchCounts & { createdAt: string })[]): string {
  return table(
    ['ID', 'ACTION', 'STATUS', 'TOTAL', 'APPLIED', 'SKIPPED', 'FAILED', 'CREATED'],
    batches.map((b) => [b.id, b.action, b.status, String(b.total), String(b.applied), String(b.skipped), String(b.failed), when(b.createdAt)]),
  );
}

/**
 * What `batch describe` prints for people: the batch's fields (action, status, the counters, the
 * filter as given, the reason, from node and idempotency key when set, created and finished), then
 * {@link notAppliedText} of its items.
 */
export function batchDetailText(b: BatchDetail, items: readonly BatchItem[]): string {
  const pairs: [string, string][] = [
    ['batch', b.id],
    ['action', b.action],
    ['status', b.status],
    ['runs', `${b.total} (${b.applied} applied, ${b.skipped} skipped, ${b.failed} failed, ${b.total - b.applied - b.skipped - b.failed} pending)`],
    ['filter', filterText(b.filter)],
  ];
  if (b.fromNodeId) pairs.push(['from node', cell(b.fromNodeId)]);
  if (b.reason) pairs.push(['reason', cell(b.reason)]);
  if (b.idempotencyKey) pairs.push(['idempotency key', cell(b.idempotencyKey)]);
  pairs.push(['created', when(b.createdAt)], ['finished', when(b.finishedAt)]);
  const rest = notAppliedText(items);
  return fields(pairs) + (rest ? `\n${rest}` : '');
}
