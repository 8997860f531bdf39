import { useCallback, useEffect, useState } from 'react';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { ConcurrencyKeysTable, RateLimitsTable } from './flow/FlowTables.js';
import { FLOW, KEYS_PAGE, type FlowData } from './flow/operations.js';
import { useAutoRefresh } from './queues/useAutoRefresh.js';
import { formatTimeShort } from './runs/time.js';
import './admin.css';

const REFRESH_MS = 5000;

/**
 * `/flow`: the tenant's concurrency keys (a page at a time, optionally of one workflow) and rate
 * limits, refreshed every 5 s.
 */
export function FlowPage() {
  const [workflowId, setWorkflowId] = useState('');
  const [pages, setPages] = useState<string[]>([]);
  const after = pages.length ? pages[pages.length - 1]! : null;
  const [{ data, error, fetching }, reexecute] = useQuery<FlowData>({
    query: FLOW,
    variables: { workflowId: workflowId.trim() || null, first: KEYS_PAGE, after },
    requestPolicy: 'network-only',
  });
  const refresh = useCallback(() => reexecute({ requestPolicy: 'network-only' }), [reexecute]);
  useAutoRefresh(refresh, REFRESH_MS);
  const [updatedAt, setUpdatedAt] = useState<Date | null>(null);
  useEffect(() => {
    if (data) setUpdatedAt(new Date());
  }, [data]);
  const keys = data?.concurrencyKeys;

  return (
    <section>
      <h1>Flow control</h1>
      <div className="toolbar refresh-bar">
        <button type="button" className="quiet" onClick={refresh}>
          Refresh
        </button>
        <span className="muted">
          {fetching ? 'Refreshing…' : updatedAt ? `Updated ${formatTimeShort(updatedAt.toISOString())}; refreshes every ${REFRESH_MS / 1000} s.` : ''}
        </span>
      </div>
      <ErrorText error={error} />
      {!data && fetching && (
        <p className="loading" role="status">
          Loading flow control…
        </p>
      )}
      <h2>Concurrency keys</h2>
      <div className="toolbar">
        <label>
          Workflow{' '}
          <input
            type="search"
            value={workflowId}
            placeholder="every workflow"
            onChange={(e) => {
              setWorkflowId(e.target.value);
              setPages([]);
            }}
          />
        </label>
      </div>
      {keys && (
        <>
          <ConcurrencyKeysTable keys={keys.edges.map((e) => e.node)} />
          {(pages.length > 0 || keys.pageInfo.hasNextPage) && (
            <div className="toolbar">
              <button type="button" className="quiet" disabled={pages.length === 0} onClick={() => setPages([])}>
                First page
              </button>
              <button
                type="button"
                className="quiet"
                disabled={!keys.pageInfo.hasNextPage || !keys.pageInfo.endCursor}
                onClick={() => setPages((p) => [...p, keys.pageInfo.endCursor!])}
              >
                Next page
              </button>
            </div>
          )}
        </>
      )}
      <h2>Rate limits</h2>
      {data && <RateLimitsTable limits={data.rateLimits} />}
    </section>
  );
}
