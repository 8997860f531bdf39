import { operation, type WeftClient } from '@weft/client';
import { loopIterationText } from '@weft/contract';
import { attemptLabel, type AttemptLimits } from './attempts.js';
import type {
  GrantedLimitsQuery,
  GrantedLimitsQueryVariables,
  HistoryEventFieldsFragment,
  RunHistoryPageQuery,
  RunHistoryPageQueryVariables,
  RunHistoryQuery,
  RunHistoryQueryVariables,
} from './generated/graphql.js';
import { cell, clip, table } from './output.js';
import { RUN_PAGE, restOfPages } from './run-pages.js';

/** What `history` reads of each applied event: all of it. */
const HISTORY_FIELDS = /* GraphQL */ `
  fragment HistoryEventFields on RunEvent { seq type at nodeId attempt payload actions ignored error }
`;

/** A run's workflow version and the first page of its history. */
export const RUN_HISTORY = operation<RunHistoryQuery, RunHistoryQueryVariables>(/* GraphQL */ `
  query RunHistory($id: ID!, $page: Int!) { run(id: $id) { workflowId version history(first: $page) { ...HistoryEventFields } } }
  ${HISTORY_FIELDS}
`);

const RUN_HISTORY_PAGE = operation<RunHistoryPageQuery, RunHistoryPageQueryVariables>(/* GraphQL */ `
  query RunHistoryPage($id: ID!, $after: Int, $page: Int!) { run(id: $id) { history(first: $page, after: $after) { ...HistoryEventFields } } }
  ${HISTORY_FIELDS}
`);

/**
 * One applied event, as the API's `Run.history` returns it (`attempt`: the API's 0-based attempt
 * of a worker report), its JSON `payload` and `actions` in the shapes the engine writes.
 */
export type HistoryEvent = Omit<HistoryEventFieldsFragment, 'payload' | 'actions'> & {
  payload: Record<string, unknown> | null;
  actions: { type: string; nodeId?: string; status?: string; reason?: string; name?: string; childRunId?: string; decision?: string }[];
};

const GRANTED_LIMITS = operation<GrantedLimitsQuery, GrantedLimitsQueryVariables>(/* GraphQL */ `
  query GrantedLimits($id: ID!, $after: ID, $page: Int!) { run(id: $id) { tasks(first: $page, after: $after) { id attemptLimit } } }
`);

/** Task id → attempt limit of each task of run `runId` that a retry or resume granted more attempts than its node's. */
export async function grantedLimits(c: WeftClient, runId: string): Promise<Map<string, number>> {
  const page = async (after: string | null) => (await c.request(GRANTED_LIMITS, { id: runId, after, page: RUN_PAGE })).run?.tasks ?? [];
  const tasks = await restOfPages(await page(null), (last) => page(last.id));
  return new Map(tasks.flatMap((t) => (t.attemptLimit == null ? [] : [[t.id, t.attemptLimit] as const])));
}

/** The events of run `runId` after the first page `first` (read with {@link RUN_HISTORY}), page by page. */
export function restOfHistory(c: WeftClient, runId: string, first: readonly HistoryEventFieldsFragment[]): Promise<HistoryEventFieldsFragment[]> {
  return restOfPages(first, async (last) => (await c.request(RUN_HISTORY_PAGE, { id: runId, after: last.seq, page: RUN_PAGE })).run!.history);
}

/** Longest detail a history row shows (the rest: `-o json`). */
const DETAIL_CHARS = 200;

/**
 * What happened in an event, short: the event's own fact (a RunRetried's `from check on version
 * 1`, `from check, failed iterations only, on version 1`), then the actions it produced.
 */
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
          ? `from ${cell(p.fromNodeId)}${p.failedIterationsOnly === true ? ', failed iterations only,' : ''} on version ${cell(p.version)}`
          : e.type === 'RunCancelled' && p.reason
            ? `reason: ${cell(p.reason)}`
            : '';
  const actions = e.actions.map((a) =>
    [a.type, a.nodeId ?? a.name ?? '', a.type === 'FinishRun' || a.type === 'DecideRun' ? (a.status ?? '') : '', a.decision ? `(${a.decision})` : '']
      .filter(Boolean)
      .join(' '),
  );
  return [fact, actions.length ? `→ ${actions.join(', ')}` : ''].filter(Boolean).join(' ');
}

/**
 * The limit of an event's attempt: the node's from `limits`, or, for an attempt its task made
 * after a retry or resume granted it more (`granted`, by task id: the last grant, which gave
 * the node's `max_attempts` more), the granted one. Undefined when unknown.
 */
function eventLimit(e: HistoryEvent, limits: AttemptLimits | undefined, granted: ReadonlyMap<string, number>): number | undefined {
  if (e.nodeId === null) return undefined;
  const own = limits?.get(e.nodeId);
  const taskId = e.payload?.taskId;
  const more = typeof taskId === 'string' ? granted.get(taskId) : undefined;
  if (more === undefined || e.attempt === null) return own;
  return own === undefined || e.attempt >= more - own ? more : own;
}

/**
 * The history as a table, oldest first: sequence number, time (to the millisecond), event,
 * node (`node[i]` for a for_each iteration, `node (iteration 2)` for a report of a DO_WHILE body
 * node, counted from 1), attempt (1-based, with the node's limit from
 * `limits`, or the task's from `granted` for the attempts a retry or resume granted) and
 * {@link eventDetail}.
 */
export function historyTable(events: readonly HistoryEvent[], limits: AttemptLimits | undefined, granted: ReadonlyMap<string, number> = new Map()): string {
  const rows = events.map((e) => {
    const iteration = e.payload?.iteration;
    const loop = e.payload?.loopIteration;
    const own = typeof iteration === 'number' ? `${cell(e.nodeId)}[${iteration}]` : cell(e.nodeId);
    const node = e.nodeId === null ? '-' : typeof loop === 'number' ? `${own} (${loopIterationText(loop)})` : own;
    return [String(e.seq), e.at, e.type, node, attemptLabel(e.attempt, eventLimit(e, limits, granted)), clip(eventDetail(e), DETAIL_CHARS)];
  });
  return table(['SEQ', 'TIME', 'EVENT', 'NODE', 'ATTEMPT', 'DETAIL'], rows);
}
