import { useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { TimeCell } from '../runs/RunsTable.js';
import { actionVerb, progressWords } from './batch.js';
import { BatchStatus } from './BatchProgress.js';
import { RUN_BATCHES, type RunBatchesPage } from './operations.js';
import '../runs.css';
import './batches.css';

const PAGE_SIZE = 25;

/** `/runs/batches`: the tenant's bulk actions, newest first, each linking to its page. */
export function BatchesPage() {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [{ data, error, fetching }] = useQuery<{ runBatches: RunBatchesPage }>({
    query: RUN_BATCHES,
    variables: { first: PAGE_SIZE, after: cursors.at(-1) ?? null },
    requestPolicy: 'cache-and-network',
  });
  const page = data?.runBatches;
  const batches = page?.edges.map((e) => e.node);

  return (
    <section className="batches-page" aria-labelledby="batches-title">
      <p className="crumbs">
        <Link to="/runs">Runs</Link>
      </p>
      <h1 id="batches-title">Bulk actions</h1>
      <p className="hint">Start one from the runs list: filter the runs, then “Bulk action…”.</p>
      {!data && fetching && (
        <p className="loading" role="status">
          Loading bulk actions…
        </p>
      )}
      <ErrorText error={error} />
      {batches && batches.length === 0 && <p className="empty-state">No bulk actions yet.</p>}
      {batches && batches.length > 0 && (
        <div className="table-wrap">
          <table className="batches-table">
            <caption className="visually-hidden">Bulk actions, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Action</th>
                <th scope="col">Status</th>
                <th scope="col">Progress</th>
              </tr>
            </thead>
            <tbody>
              {batches.map((b) => (
                <tr key={b.id} data-batch-id={b.id}>
                  <td>
                    <Link to={`/runs/batches/${b.id}`} aria-label={`Bulk action ${b.id}`}>
                      <TimeCell at={b.createdAt} />
                    </Link>
                  </td>
                  <td>{actionVerb(b.action)}</td>
                  <td>
                    <BatchStatus status={b.status} />
                  </td>
                  <td>{progressWords(b)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {page && (cursors.length > 1 || page.pageInfo.hasNextPage) && (
        <nav className="pager" aria-label="Pages of bulk actions">
          <button type="button" className="quiet" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
            Previous page
          </button>
          <span className="muted">Page {cursors.length}</span>
          <button
            type="button"
            className="quiet"
            disabled={!page.pageInfo.hasNextPage || !page.pageInfo.endCursor}
            onClick={() => setCursors([...cursors, page.pageInfo.endCursor])}
          >
            Next page
          </button>
        </nav>
      )}
    </section>
  );
}
