import { useEffect, useMemo, useState } from 'react';
import { useClient, useQuery, useSubscription, type Client, type CombinedError } from 'urql';
import { newer, restOfPages, sensitiveNodes } from './model.js';
import { RUN, RUN_HISTORY_PAGE, RUN_PAGE, RUN_TASKS_PAGE, RUN_UPDATED, VERSION_DEFINITION } from './operations.js';
import type { Json, RunDetail, RunEvent, Task } from './types.js';

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
 * subscription) is never shown. Both read the first page of tasks and history; a run with more
 * gets the next pages read after each state ({@link useRestOfRun}).
 */
export function useRun(runId: string): LiveRun {
  const [query] = useQuery<{ run: RunDetail | null }>({ query: RUN, variables: { id: runId, page: RUN_PAGE } });
  const [sub] = useSubscription<{ runUpdated: RunDetail }>({ query: RUN_UPDATED, variables: { runId, page: RUN_PAGE } });

  const mine = (r: RunDetail | null | undefined) => (r && r.id.toLowerCase() === runId.toLowerCase() ? r : undefined);
  const run = useRestOfRun(newer(mine(query.data?.run), mine(sub.data?.runUpdated)));

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

interface Rest {
  runId: string;
  seq: number;
  tasks: Task[];
  history: RunEvent[];
}

/**
 * `run` with every task and event: when its first page of either is full, the next pages are
 * read (again after each new state, by seq). Until they arrive the pages read for the previous
 * state stand in (tasks and events only ever add at the end, so they are a prefix of the new).
 */
function useRestOfRun(run: RunDetail | undefined): RunDetail | undefined {
  const client = useClient();
  const [rest, setRest] = useState<Rest | undefined>(undefined);
  const moreTasks = !!run && run.tasks.length >= RUN_PAGE;
  const moreHistory = !!run && run.history.length >= RUN_PAGE;

  useEffect(() => {
    if (!run || (!moreTasks && !moreHistory)) return;
    let live = true;
    void readRest(client, run).then(
      (r) => live && setRest(r),
      () => undefined, // the first pages stay shown; the next state tries again
    );
    return () => {
      live = false;
    };
    // A new state is a new seq; the rest is read again only then.
  }, [client, run?.id, run?.seq, moreTasks, moreHistory]);

  if (!run || !rest || rest.runId !== run.id || (!moreTasks && !moreHistory)) return run;
  return { ...run, tasks: [...run.tasks, ...rest.tasks], history: [...run.history, ...rest.history] };
}

async function readRest(client: Client, run: RunDetail): Promise<Rest> {
  const page = async <T>(query: string, after: unknown, field: 'tasks' | 'history'): Promise<T[]> => {
    const r = await client.query(query, { id: run.id, after, page: RUN_PAGE }, { requestPolicy: 'network-only' }).toPromise();
    if (r.error) throw r.error;
    return (r.data?.run?.[field] ?? []) as T[];
  };
  const [tasks, history] = await Promise.all([
    restOfPages<Task>(run.tasks, RUN_PAGE, (last) => page<Task>(RUN_TASKS_PAGE, last.id, 'tasks')),
    restOfPages<RunEvent>(run.history, RUN_PAGE, (last) => page<RunEvent>(RUN_HISTORY_PAGE, last.seq, 'history')),
  ]);
  return { runId: run.id, seq: run.seq, tasks, history };
}
