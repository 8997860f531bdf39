import { useQuery } from 'urql';
import { Link } from 'react-router';
import { ErrorText } from '../../components/ErrorText.js';
import { TimeCell } from '../runs/RunsTable.js';
import { eventName, WEBHOOK_DELIVERIES, type DeliveryRow } from './operations.js';

/** A webhook's 50 newest deliveries: the event, its run, where it stands and what the receiver last answered. */
export function DeliveriesTable(props: { webhookId: string; url: string }) {
  const [{ data, error, fetching }] = useQuery<{ webhookDeliveries: { edges: { node: DeliveryRow }[] } }>({
    query: WEBHOOK_DELIVERIES,
    variables: { webhookId: props.webhookId },
    requestPolicy: 'network-only',
  });
  const rows = data?.webhookDeliveries.edges.map((e) => e.node) ?? [];
  return (
    <section aria-label={`Deliveries to ${props.url}`}>
      <h2>Deliveries to {props.url}</h2>
      {fetching && !data && (
        <p className="loading" role="status">
          Loading deliveries…
        </p>
      )}
      <ErrorText error={error} />
      {data && rows.length === 0 && <p className="muted">No deliveries yet: one is sent when a run ends or pauses with an event this webhook has.</p>}
      {rows.length > 0 && (
        <div className="table-wrap">
          <table className="keys deliveries">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Run</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Created</th>
                <th scope="col">Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id} data-delivery-id={d.id} data-status={d.status} data-attempts={d.attempts}>
                  <td>{eventName(d.event)}</td>
                  <td>
                    <Link to={`/runs/${d.runId}`} className="mono">
                      {d.runId}
                    </Link>
                  </td>
                  <td>
                    <span className={`status status-${d.status.toLowerCase()}`}>{d.status}</span>
                  </td>
                  <td>{d.attempts}</td>
                  <td>{d.lastError ?? (d.lastStatusCode != null ? `HTTP ${d.lastStatusCode}` : '–')}</td>
                  <td>
                    <TimeCell at={d.createdAt} />
                  </td>
                  <td>{d.nextAttemptAt ? <TimeCell at={d.nextAttemptAt} /> : '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
