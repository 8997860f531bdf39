import { registerEnumType } from '@nestjs/graphql';
import type { RateWindowNow, RunWait, TaskWait } from '@weft/persistence';

/** How long a task waits on a queue no live worker serves before its wait says so (ms). */
export const UNSERVED_AFTER_MS = 60_000;

/** Why a QUEUED run or task is not running yet. */
export const WaitReason = {
  ConcurrencyLimit: 'CONCURRENCY_LIMIT',
  RateLimit: 'RATE_LIMIT',
  QueueBacklog: 'QUEUE_BACKLOG',
  RunPaused: 'RUN_PAUSED',
  NoLiveWorker: 'NO_LIVE_WORKER',
} as const;
export type WaitReason = (typeof WaitReason)[keyof typeof WaitReason];

export const WaitReasonEnum = Object.fromEntries(Object.values(WaitReason).map((v) => [v, v])) as { [K in WaitReason]: K };

registerEnumType(WaitReasonEnum, {
  name: 'WaitReason',
  description: 'Why a QUEUED run or task is not running yet.',
  valuesMap: {
    CONCURRENCY_LIMIT: { description: 'Its concurrency key has as many active runs (or tasks) as its limit allows.' },
    RATE_LIMIT: { description: 'Its rate key started as many attempts as its limit allows within the window.' },
    QUEUE_BACKLOG: { description: 'It waits for a worker slot on its queue, behind earlier work (fair order between tenants, then priority).' },
    RUN_PAUSED: { description: 'Its run is paused (pauseRun, or a node with on_exhausted: pause ran out of attempts): it is dispatched after resumeRun.' },
    NO_LIVE_WORKER: { description: 'It has waited over a minute on a queue that no live worker serves: it runs once a worker serving the queue starts.' },
  },
});

/** A wait as the API shows it: the reason (null for a retry's backoff, which the detail explains) and a sentence. */
export interface Wait {
  reason: WaitReason | null;
  detail: string;
}

/**
 * Why a run of status `status` waits: a QUEUED run waits for a slot of its concurrency key
 * (`wait`, from its group; absent when the group could not be read). Null for any other status.
 * E.g. `concurrency limit 2 reached for key "acme" (2 active, 3 queued)`.
 */
export function runWaitOf(status: string, wait: RunWait | undefined): Wait | null {
  if (status !== 'QUEUED') return null;
  if (!wait) return { reason: WaitReason.ConcurrencyLimit, detail: 'waiting for a concurrency slot' };
  const key = wait.key === '' ? '' : ` for key ${JSON.stringify(wait.key)}`;
  const counts = `(${wait.active} active, ${wait.queued} queued)`;
  const detail = wait.limit === null ? `waiting for a concurrency slot${key} ${counts}` : `concurrency limit ${wait.limit} reached${key} ${counts}`;
  return { reason: WaitReason.ConcurrencyLimit, detail };
}

/**
 * A rate-limit hold as its key's window stands now: `rate limit "partner" 20 per 1 s, next start
 * 12:00:01.250Z`, or, while attempts admitted and not started yet fill the window, `…, 2 admitted
 * attempts not started yet`.
 */
export function rateDetail(w: RateWindowNow): string {
  const head = `rate limit ${JSON.stringify(w.key)} ${w.limit} per ${w.perSeconds} s`;
  if (w.nextStartAt === null) return `${head}, ${w.admitted} admitted ${w.admitted === 1 ? 'attempt' : 'attempts'} not started yet`;
  return `${head}, next start ${w.nextStartAt.toISOString().slice(11)}`;
}

/** A wait as people read it: `45s`, `3m`, `2h 5m`. */
export function waitedText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

/**
 * Why a task of status `status` on `queue` waits: a QUEUED task's backlog row (`wait`) may be
 * held by its node's concurrency or rate limit (the hold's sentence as the detail) or by a
 * retry's backoff (no reason, the sentence only); a row without a hold waits its turn on the
 * queue (QUEUE_BACKLOG). `unserved` (the task has waited `waitedMs` past {@link
 * UNSERVED_AFTER_MS} on a queue no live worker serves) turns a backlog wait, or a PENDING
 * task's, into NO_LIVE_WORKER: `waiting 3m on queue "gpu": no live worker serves it`. Only the
 * tenant's own rows are read, and the sentence names nothing of another tenant's. Null for any
 * other status, and for a PENDING task a live worker serves.
 */
export function taskWaitOf(status: string, queue: string | null, wait: TaskWait | undefined, unserved?: { waitedMs: number }): Wait | null {
  if (unserved && queue !== null && (status === 'PENDING' || (status === 'QUEUED' && (wait?.holdReason ?? null) === null))) {
    return { reason: WaitReason.NoLiveWorker, detail: `waiting ${waitedText(unserved.waitedMs)} on queue ${JSON.stringify(queue)}: no live worker serves it` };
  }
  if (status !== 'QUEUED') return null;
  const backlog = (q: string | null): Wait => ({
    reason: WaitReason.QueueBacklog,
    detail: q ? `waiting for a worker slot on queue ${JSON.stringify(q)}` : 'waiting for a worker slot',
  });
  if (!wait) return backlog(queue);
  switch (wait.holdReason) {
    case null:
      return backlog(wait.queue);
    case 'CONCURRENCY_LIMIT':
      return { reason: WaitReason.ConcurrencyLimit, detail: wait.holdDetail ?? 'concurrency limit reached' };
    case 'RATE_LIMIT':
      return { reason: WaitReason.RateLimit, detail: wait.rate ? rateDetail(wait.rate) : (wait.holdDetail ?? 'rate limit reached') };
    case 'RUN_PAUSED':
      return { reason: WaitReason.RunPaused, detail: wait.holdDetail ?? 'run paused' };
    case 'BACKOFF':
      return { reason: null, detail: wait.holdDetail ?? (wait.heldUntil ? `retry backoff until ${wait.heldUntil.toISOString()}` : 'retry backoff') };
    default:
      return { reason: null, detail: wait.holdDetail ?? `held (${wait.holdReason})` };
  }
}
