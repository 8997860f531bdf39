import { cell } from './output.js';

/**
 * Why a QUEUED run or task waits, for people: `REASON: detail` (`RATE_LIMIT: rate limit "partner"
 * 20 per 1 s, next start 12:00:01.250Z`), the detail alone when there is no reason (a retry's
 * backoff); empty when it does not wait.
 */
export function waitText(x: { waitReason?: string | null; waitDetail?: string | null }): string {
  if (!x.waitDetail) return '';
  return x.waitReason ? `${x.waitReason}: ${cell(x.waitDetail)}` : cell(x.waitDetail);
}

/** Held iterations of a node that `run-status` lists and a watch prints per update; `-o json` has them all. */
export const HELD_SHOWN = 5;

/** Whether a task is held: QUEUED with a reason or a sentence saying why (a rate limit, a backoff). */
export function held(t: { status: string; waitDetail?: string | null }): boolean {
  return t.status === 'QUEUED' && !!t.waitDetail;
}

/**
 * Why a PAUSED run waits, for people: `paused: <reason>` (the reason given to `pause`, `parent
 * run <id> paused`, or `node <id> exhausted its <n> attempts: <error>`), `paused` when the API
 * gives none; empty for a run that is not PAUSED.
 */
export function pauseText(run: { status: string; pauseReason?: string | null }): string {
  if (run.status !== 'PAUSED') return '';
  return run.pauseReason ? `paused: ${cell(run.pauseReason)}` : 'paused';
}
