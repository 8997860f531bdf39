import { useCallback, useEffect, useState } from 'react';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { QueuesTable } from './queues/QueuesTable.js';
import { WorkersTable } from './queues/WorkersTable.js';
import { QUEUES_AND_WORKERS, type QueuesData } from './queues/operations.js';
import { useAutoRefresh } from './queues/useAutoRefresh.js';
import { formatTimeShort } from './runs/time.js';
import './admin.css';

const REFRESH_MS = 5000;

/** `/queues`: the queues with the tenant's counts and the live workers, refreshed every 5 s. */
export function QueuesPage() {
  const [{ data, error, fetching }, reexecute] = useQuery<QueuesData>({ query: QUEUES_AND_WORKERS, requestPolicy: 'network-only' });
  const refresh = useCallback(() => reexecute({ requestPolicy: 'network-only' }), [reexecute]);
  const now = useAutoRefresh(refresh, REFRESH_MS);
  const [updatedAt, setUpdatedAt] = useState<Date | null>(null);
  useEffect(() => {
    if (data) setUpdatedAt(new Date());
  }, [data]);

  return (
    <section>
      <h1>Queues</h1>
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
          Loading queues…
        </p>
      )}
      {data && (
        <>
          <h2>Queues</h2>
          <QueuesTable queues={data.queues} />
          <h2>Workers</h2>
          <WorkersTable workers={data.workers} now={Math.max(now, updatedAt?.getTime() ?? 0)} />
        </>
      )}
    </section>
  );
}
