import { useState } from 'react';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { useCan } from '../session/session.js';
import { TimeCell } from './runs/RunsTable.js';
import { ScheduleForm } from './schedules/ScheduleForm.js';
import { SchedulesTable } from './schedules/SchedulesTable.js';
import { SCHEDULES, WORKFLOW_IDS, type ScheduleDetail, type SchedulesPage as SchedulesPageData, type WorkflowChoice } from './schedules/operations.js';
import './admin.css';
import './runs.css';
import './schedules/schedules.css';

const PAGE_SIZE = 25;
/** The search params: the workflow filter and the cursor of the page shown. */
const WORKFLOW_PARAM = 'workflow';
const CURSOR_PARAM = 'after';

/** What the history entry of a page remembers: the cursors of the pages before it; or the schedule just deleted. */
interface PageState {
  previous?: (string | null)[];
  deleted?: string;
}

/**
 * `/schedules`: the tenant's schedules in creation order, optionally of one workflow
 * (`?workflow=`), a page at a time (`?after=` cursor, the ones before it in the history entry).
 * An operator creates one here ("New schedule").
 */
export function SchedulesPage() {
  const can = useCan();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const location = useLocation();
  const state = location.state as PageState | null;
  const workflowId = params.get(WORKFLOW_PARAM) ?? '';
  const after = params.get(CURSOR_PARAM);
  const previous = state?.previous ?? [];
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<ScheduleDetail | null>(null);

  const [result, reexecute] = useQuery<{ schedules: SchedulesPageData }>({
    query: SCHEDULES,
    variables: { workflowId: workflowId || null, first: PAGE_SIZE, after },
  });
  const [{ data: workflowsData }] = useQuery<{ workflows: WorkflowChoice[] }>({ query: WORKFLOW_IDS });
  const rows = result.data?.schedules.edges.map((e) => e.node);
  const endCursor = result.data?.schedules.pageInfo.endCursor ?? null;
  const hasNext = result.data?.schedules.pageInfo.hasNextPage ?? false;
  const pageNumber = after === null ? 1 : state?.previous ? state.previous.length + 1 : null;

  const goTo = (next: URLSearchParams, pageState: PageState = {}) => navigate({ search: `?${next}` }, { state: pageState });
  const filterBy = (workflow: string) => {
    const next = new URLSearchParams(params);
    next.delete(CURSOR_PARAM);
    if (workflow) next.set(WORKFLOW_PARAM, workflow);
    else next.delete(WORKFLOW_PARAM);
    goTo(next);
  };
  const page = (cursor: string | null, pageState: PageState) => {
    const next = new URLSearchParams(params);
    if (cursor) next.set(CURSOR_PARAM, cursor);
    else next.delete(CURSOR_PARAM);
    goTo(next, pageState);
  };

  return (
    <section className="schedules-page" aria-labelledby="schedules-title">
      <div className="runs-heading">
        <h1 id="schedules-title">Schedules</h1>
        {can.operate && !creating && (
          <button type="button" onClick={() => (setCreated(null), setCreating(true))}>
            New schedule
          </button>
        )}
      </div>
      {state?.deleted && (
        <p className="success" role="status">
          Deleted schedule <span className="mono">{state.deleted}</span>; its runs stay.
        </p>
      )}
      {creating && (
        <ScheduleForm
          onCancel={() => setCreating(false)}
          onDone={(s) => {
            setCreating(false);
            setCreated(s);
            reexecute({ requestPolicy: 'network-only' });
          }}
        />
      )}
      {created && (
        <p className="success" role="status">
          Created schedule{' '}
          <Link className="mono" to={`/schedules/${created.id}`}>
            {created.id}
          </Link>
          .{' '}
          {created.paused ? (
            'It is paused.'
          ) : created.nextFireAt ? (
            <>
              Next fire: <TimeCell at={created.nextFireAt} />.
            </>
          ) : (
            'It has no fire time left.'
          )}
        </p>
      )}
      <form className="toolbar" role="search" aria-label="Filter schedules" onSubmit={(e) => e.preventDefault()}>
        <label className="field">
          Workflow
          <select value={workflowId} onChange={(e) => filterBy(e.target.value)}>
            <option value="">All workflows</option>
            {workflowId && !workflowsData?.workflows.some((w) => w.id === workflowId) && <option value={workflowId}>{workflowId}</option>}
            {workflowsData?.workflows.map((w) => (
              <option key={w.id} value={w.id}>
                {w.id}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorText error={result.error} />
      {!rows && result.fetching && (
        <p className="loading" role="status">
          Loading schedules…
        </p>
      )}
      {rows && rows.length === 0 && (
        <p className="empty-state">
          {after !== null
            ? 'No more schedules on this page.'
            : workflowId
              ? `Workflow ${workflowId} has no schedules.`
              : `No schedules yet.${can.operate ? ' Create one with “New schedule”.' : ' An operator key creates them.'}`}
        </p>
      )}
      {rows && rows.length > 0 && <SchedulesTable schedules={rows} caption={`Schedules${pageNumber ? `, page ${pageNumber}` : ''}, oldest first`} />}
      {(after !== null || hasNext) && (
        <nav className="pager" aria-label="Pages of schedules">
          <button type="button" className="quiet" disabled={after === null} onClick={() => page(previous.at(-1) ?? null, { previous: previous.slice(0, -1) })}>
            Previous page
          </button>
          <span className="muted">{pageNumber ? `Page ${pageNumber}` : 'Later schedules'}</span>
          <button type="button" className="quiet" disabled={!hasNext || !endCursor} onClick={() => page(endCursor, { previous: [...previous, after] })}>
            Next page
          </button>
        </nav>
      )}
    </section>
  );
}
