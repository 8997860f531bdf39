import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { useCan } from '../../session/session.js';
import { TimeCell } from '../runs/RunsTable.js';
import { actionVerb } from './batch.js';
import { BatchItems } from './BatchItems.js';
import { BatchProgress, BatchStatus } from './BatchProgress.js';
import { RUN_BATCH, STOP_RUN_BATCH, type RunBatchWithItems } from './operations.js';
import '../runs.css';
import './batches.css';

/** How often a RUNNING batch is read again (the scheduler acts on at most 100 runs a second). */
export const BATCH_POLL_MS = 1000;
/** Runs per page of a batch's outcomes. */
const ITEMS_PAGE = 50;

/**
 * `/runs/batches/:batchId`: one bulk action, read again every second while RUNNING (its counts
 * and the page of outcomes shown), with Stop for an operator while it runs. The outcomes are
 * paged in the batch's order; the cursors of the pages before are kept in the page's state.
 */
export function BatchPage() {
  const { batchId = '' } = useParams();
  // Another batch is another page: its own cursors, from its first page.
  return <BatchView key={batchId} batchId={batchId} />;
}

function BatchView(props: { batchId: string }) {
  const { batchId } = props;
  const can = useCan();
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const after = cursors.at(-1) ?? null;
  const [{ data, error, fetching }, reexecute] = useQuery<{ runBatch: RunBatchWithItems }>({
    query: RUN_BATCH,
    variables: { id: batchId, first: ITEMS_PAGE, after },
    requestPolicy: 'network-only',
  });
  const [stopState, stop] = useMutation(STOP_RUN_BATCH);
  const batch = data?.runBatch;
  const running = batch?.status === 'RUNNING';

  useEffect(() => {
    if (!running) return;
    const timer = window.setInterval(() => reexecute({ requestPolicy: 'network-only' }), BATCH_POLL_MS);
    return () => window.clearInterval(timer);
  }, [running, reexecute]);

  const onStop = async () => {
    await stop({ id: batchId });
    reexecute({ requestPolicy: 'network-only' });
  };

  return (
    <section className="batch-page" aria-labelledby="batch-title">
      <p className="crumbs">
        <Link to="/runs">Runs</Link> / <Link to="/runs/batches">Bulk actions</Link>
      </p>
      <div className="run-title">
        <h1 id="batch-title">
          Bulk action{batch ? `: ${actionVerb(batch.action)}` : ''} <span className="mono run-id">{batchId}</span>
        </h1>
        {batch && <BatchStatus status={batch.status} />}
      </div>
      {!batch && fetching && (
        <p className="loading" role="status">
          Loading the bulk action…
        </p>
      )}
      <ErrorText error={error} />
      {batch && (
        <>
          <dl className="facts">
            <div>
              <dt>Created</dt>
              <dd>
                <TimeCell at={batch.createdAt} />
              </dd>
            </div>
            <div>
              <dt>Finished</dt>
              <dd>
                <TimeCell at={batch.finishedAt} />
              </dd>
            </div>
            {batch.fromNodeId && (
              <div>
                <dt>Retried from</dt>
                <dd className="mono">{batch.fromNodeId}</dd>
              </div>
            )}
            {batch.reason && (
              <div>
                <dt>Reason</dt>
                <dd className="pre-wrap">{batch.reason}</dd>
              </div>
            )}
            <div>
              <dt>Filter</dt>
              <dd className="mono pre-wrap" data-testid="batch-filter">
                {JSON.stringify(batch.filter)}
              </dd>
            </div>
          </dl>
          <BatchProgress batch={batch} />
          {running && can.operate && (
            <div className="form-buttons">
              <button type="button" className="danger" disabled={stopState.fetching} onClick={() => void onStop()}>
                Stop
              </button>
              <span className="hint">Leaves the runs not acted on yet as they are.</span>
            </div>
          )}
          <ErrorText error={stopState.error} />
          <h2>Runs</h2>
          <BatchItems items={batch.items} caption={`Runs of the bulk action, page ${cursors.length}`} />
          {(cursors.length > 1 || batch.items.pageInfo.hasNextPage) && (
            <nav className="pager" aria-label="Pages of the bulk action's runs">
              <button type="button" className="quiet" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
                Previous page
              </button>
              <span className="muted">Page {cursors.length}</span>
              <button
                type="button"
                className="quiet"
                disabled={!batch.items.pageInfo.hasNextPage || !batch.items.pageInfo.endCursor}
                onClick={() => setCursors([...cursors, batch.items.pageInfo.endCursor])}
              >
                Next page
              </button>
            </nav>
          )}
        </>
      )}
    </section>
  );
}
