import { useMemo } from 'react';
import { useQuery, useSubscription, type CombinedError } from 'urql';
import { newer, sensitiveNodes } from './model.js';
import { RUN, RUN_UPDATED, VERSION_DEFINITION } from './operations.js';
import type { Json, RunDetail } from './types.js';

export interface LiveRun {
  /** The newest state known, from the query or the subscription (whichever has the higher seq). */
  run: RunDetail | undefined;
  fetching: boolean;
  /** The query's failure (NOT_FOUND…). */
  error: CombinedError | undefined;
  /** The subscription's failure: the page still shows the run, without live updates. */
  liveError: CombinedError | undefined;
  /** The nodes the run's version marks sensitive; undefined until (or unless) the definition is read. */
  sensitive: ReadonlySet<string> | undefined;
}

/**
 * One run, live: read once by query, then replaced by every `runUpdated` the subscription
 * sends (both ask for the same fields). A state from another run (the previous page's
 * subscription) is never shown.
 */
export function useRun(runId: string): LiveRun {
  const [query] = useQuery<{ run: RunDetail | null }>({ query: RUN, variables: { id: runId } });
  const [sub] = useSubscription<{ runUpdated: RunDetail }>({ query: RUN_UPDATED, variables: { runId } });

  const mine = (r: RunDetail | null | undefined) => (r && r.id.toLowerCase() === runId.toLowerCase() ? r : undefined);
  const run = newer(mine(query.data?.run), mine(sub.data?.runUpdated));

  const [definition] = useQuery<{ workflowVersion: { definition: Json } | null }>({
    query: VERSION_DEFINITION,
    variables: { workflowId: run?.workflowId ?? '', version: run?.version ?? null },
    pause: !run,
  });
  const def = definition.data?.workflowVersion?.definition;
  const sensitive = useMemo(() => (def === undefined ? undefined : sensitiveNodes(def)), [def]);

  return {
    run,
    fetching: query.fetching,
    error: run ? undefined : query.error,
    liveError: sub.error,
    sensitive,
  };
}
