/**
 * The watched Weft row of the peers bench: each run followed, while it runs, by a `runUpdated`
 * subscriber over graphql-ws with the selection `weft run --watch` uses (the CLI's WATCH_RUN),
 * as the console and the CLI follow runs. The bench still learns a run's end from the run-update
 * channel; the subscriber only adds what watching costs (the API's updates, the publishing of
 * every step of a watched run).
 */
import { RUN_PAGE } from '../apps/cli/src/client/run-pages.js';
import { WATCH_RUN } from '../apps/cli/src/client/run-watch.js';

/** What the follower needs of a WeftClient. */
export interface Subscriber {
  subscribe(query: string, variables: Record<string, unknown>, onNext: (data: any) => void | boolean): { done: Promise<void>; dispose: () => void };
}

/** The statuses after which a run changes no more. */
const FINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/** The subscription a watched run is followed with. */
export const WATCH_QUERY: string = WATCH_RUN;

/**
 * Follows run `runId` until a payload shows it ended (the subscription is then closed);
 * `done` resolves to that status and the number of payloads received, or rejects with the
 * subscription's error. `dispose` ends it early (the bench stopping).
 */
export function followRun(client: Subscriber, runId: string): { done: Promise<{ status: string; payloads: number }>; dispose: () => void } {
  let payloads = 0;
  let status = '';
  const sub = client.subscribe(WATCH_QUERY, { id: runId, page: RUN_PAGE }, (d: { runUpdated?: { status?: string } }) => {
    payloads++;
    status = d.runUpdated?.status ?? status;
    return !FINAL.has(status);
  });
  return { done: sub.done.then(() => ({ status, payloads })), dispose: sub.dispose };
}
