import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { errorText } from '../api/errors.js';
import { bulkRefusal } from './batches/batch.js';
import { coalesce } from './runs/coalesce.js';
import { CURSOR_PARAM, hasFilters, readFilters, toFilterInput, writeFilters, type RunFilterParams } from './runs/filters.js';
import { isFinished, recordChange, withLiveStatus, type LiveStatuses } from './runs/model.js';
import { RUNS } from './runs/operations.js';
import { BulkActionForm } from './runs/BulkActionForm.js';
import { RunFilters } from './runs/RunFilters.js';
import { RunsTable } from './runs/RunsTable.js';
import type { RunChange, RunsPage as RunsPageData } from './runs/types.js';
import { useRunChanges } from './runs/useRunChanges.js';
import { useCan, useReconnected } from '../session/session.js';
import './runs.css';
import './batches/batches.css';

const PAGE_SIZE = 25;
/** How long changes are gathered before the list is asked for again. */
const REFETCH_DELAY_MS = 300;

/** What the history entry of a page remembers: the cursors of the pages before it, oldest first. */
interface PagingState {
  previous?: (string | null)[];
}

/**
 * `/runs`: the tenant's runs, newest first, filtered by the URL's search params, a page at a
 * time (Relay cursors: the page's cursor is in the URL, the ones before it in the history
 * entry). Live: a `runChanged` for a listed run updates its status at once (and a finished one
 * is re-read for its times); a change of a run not listed (a new run) re-reads the first page.
 */
export function RunsPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const location = useLocation();
  const filters = useMemo(() => readFilters(params), [params]);
  const after = params.get(CURSOR_PARAM);
  // Unknown after a reload on a later page: "Previous page" then goes back to the newest runs.
  const remembered = (location.state as PagingState | null)?.previous;
  const previous = remembered ?? [];
  const can = useCan();
  const { filter, problem } = toFilterInput(filters);
  const [bulkOpen, setBulkOpen] = useState(false);
  const refusal = bulkRefusal(hasFilters(filters), problem);

  const [result, reexecute] = useQuery<{ runs: RunsPageData }>({
    query: RUNS,
    variables: { filter, first: PAGE_SIZE, after },
    pause: problem !== null,
  });

  const rows = result.data?.runs.edges.map((e) => e.node);
  const [live, setLive] = useState<LiveStatuses>(() => new Map());

  // What the live handler needs of the current render.
  const view = useRef({ ids: new Set<string>(), firstPage: true });
  view.current = { ids: new Set(rows?.map((r) => r.id)), firstPage: after === null };
  const refetchNow = useRef(reexecute);
  refetchNow.current = reexecute;
  const refetch = useMemo(() => coalesce(() => refetchNow.current({ requestPolicy: 'network-only' }), REFETCH_DELAY_MS), []);
  useEffect(() => () => refetch.cancel(), [refetch]);

  const onChange = useCallback(
    (change: RunChange) => {
      if (view.current.ids.has(change.runId)) {
        setLive((l) => recordChange(l, change));
        if (isFinished(change.status)) refetch.trigger(); // for its finish time and duration
      } else if (view.current.firstPage) {
        refetch.trigger();
      }
    },
    [refetch],
  );
  const liveError = useRunChanges(onChange);
  // Changes made while the socket was down are not replayed: read the page again.
  useReconnected(() => refetch.trigger());

  const apply = (next: RunFilterParams) => navigate({ search: `?${writeFilters(params, next)}` });
  const goTo = (cursor: string | null, state: PagingState) => {
    const next = new URLSearchParams(params);
    if (cursor) next.set(CURSOR_PARAM, cursor);
    else next.delete(CURSOR_PARAM);
    navigate({ search: `?${next}` }, { state });
  };
  const endCursor = result.data?.runs.pageInfo.endCursor ?? null;
  const hasNext = result.data?.runs.pageInfo.hasNextPage ?? false;
  const pageNumber = after === null ? 1 : remembered ? remembered.length + 1 : null;

  const shown = rows?.map((r) => withLiveStatus(r, live));

  return (
    <section className="runs-page" aria-labelledby="runs-title">
      <div className="runs-heading">
        <h1 id="runs-title">Runs</h1>
        {can.operate && (
          <Link className="button" to={`/runs/start${filters.workflowId ? `?workflowId=${encodeURIComponent(filters.workflowId)}` : ''}`}>
            Start a run
          </Link>
        )}
        {can.operate && (
          <button
            type="button"
            className="quiet"
            disabled={refusal !== null}
            aria-describedby={refusal ? 'bulk-refusal' : undefined}
            aria-expanded={bulkOpen && !refusal}
            onClick={() => setBulkOpen(true)}
          >
            Bulk action…
          </button>
        )}
        <Link to="/runs/batches">Bulk actions</Link>
        <p className="muted live-note">{liveError ? `Live updates unavailable: ${errorText(liveError)}` : 'Live: statuses update as runs change.'}</p>
      </div>
      <RunFilters filters={filters} onApply={apply} />
      {can.operate && refusal && (
        <p className="hint bulk-refusal" id="bulk-refusal">
          {refusal}
        </p>
      )}
      {/* A new filter is a new form: its count and its idempotency key belong to one filter. */}
      {can.operate && bulkOpen && filter && !refusal && <BulkActionForm key={JSON.stringify(filter)} filter={filter} onClose={() => setBulkOpen(false)} />}
      <ErrorText error={problem} />
      <ErrorText error={result.error} />
      {!problem && !rows && result.fetching && (
        <p className="loading" role="status">
          Loading runs…
        </p>
      )}
      {shown && shown.length === 0 && (
        <p className="empty-state">
          {after !== null
            ? 'No more runs on this page.'
            : hasFilters(filters)
              ? 'No runs match these filters.'
              : 'No runs yet. Start one from a workflow, or with `weft run <workflow>`.'}
        </p>
      )}
      {shown && shown.length > 0 && <RunsTable runs={shown} caption={`Runs${pageNumber ? `, page ${pageNumber}` : ''}, newest first`} />}
      {(after !== null || hasNext) && (
        <nav className="pager" aria-label="Pages of runs">
          <button type="button" className="quiet" disabled={after === null} onClick={() => goTo(previous.at(-1) ?? null, { previous: previous.slice(0, -1) })}>
            Previous page
          </button>
          <span className="muted">{pageNumber ? `Page ${pageNumber}` : 'Older runs'}</span>
          <button type="button" className="quiet" disabled={!hasNext || !endCursor} onClick={() => goTo(endCursor, { previous: [...previous, after] })}>
            Next page
          </button>
        </nav>
      )}
    </section>
  );
}
