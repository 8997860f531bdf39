import { attemptLabel, type AttemptLimits } from './attempts.js';
import { cell, clip, table } from './output.js';

/** What `history` reads of each applied event: all of it. */
export const HISTORY_FIELDS = 'seq type at nodeId attempt payload actions ignored error';

/** One applied event, as the API's `Run.history` returns it. */
export interface HistoryEvent {
  seq: number;
  type: string;
  at: string;
  nodeId: string | null;
  /** The API's 0-based attempt of a worker report. */
  attempt: number | null;
  payload: Record<string, unknown> | null;
  actions: { type: string; nodeId?: string; status?: string; reason?: string; name?: string; childRunId?: string }[];
  ignored: string | null;
  error: string | null;
}

/** Longest detail a history row shows (the rest: `-o json`). */
const DETAIL_CHARS = 200;

/** What happened in an event, short: the event's own fact, then the actions it produced. */
export function eventDetail(e: HistoryEvent): string {
  if (e.error) return `rejected: ${e.error}`;
  if (e.ignored) return `ignored: ${e.ignored}`;
  const p = e.payload ?? {};
  const fact =
    e.type === 'NodeFailed'
      ? `error: ${cell(p.error)}`
      : e.type === 'SignalReceived'
        ? `signal ${cell(p.name)}`
        : e.type === 'RunRetried'
          ? `from ${cell(p.fromNodeId)} on version ${cell(p.version)}`
          : e.type === 'RunCancelled' && p.reason
            ? `reason: ${cell(p.reason)}`
            : '';
  const actions = e.actions.map((a) => [a.type, a.nodeId ?? a.name ?? '', a.type === 'FinishRun' ? (a.status ?? '') : ''].filter(Boolean).join(' '));
  return [fact, actions.length ? `→ ${actions.join(', ')}` : ''].filter(Boolean).join(' ');
}

/**
 * The history as a table, oldest first: sequence number, time (to the millisecond), event,
 * node (`node[i]` for a for_each iteration), attempt (1-based, with the node's limit from
 * `limits`) and {@link eventDetail}.
 */
export function historyTable(events: readonly HistoryEvent[], limits: AttemptLimits | undefined): string {
  const rows = events.map((e) => {
    const iteration = e.payload?.iteration;
    const node = e.nodeId === null ? '-' : typeof iteration === 'number' ? `${cell(e.nodeId)}[${iteration}]` : cell(e.nodeId);
    return [
      String(e.seq),
      e.at,
      e.type,
      node,
      attemptLabel(e.attempt, e.nodeId === null ? undefined : limits?.get(e.nodeId)),
      clip(eventDetail(e), DETAIL_CHARS),
    ];
  });
  return table(['SEQ', 'TIME', 'EVENT', 'NODE', 'ATTEMPT', 'DETAIL'], rows);
}
