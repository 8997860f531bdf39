import { formatDuration } from './format.js';
import type { QueueRow } from './operations.js';

/** The queues the tenant has tasks on or a live worker serves, with the tenant's own counts. */
export function QueuesTable(props: { queues: QueueRow[] }) {
  if (!props.queues.length) return <p className="muted">No queues: the tenant has no tasks waiting and no live worker serves a queue it may use.</p>;
  return (
    <div className="table-wrap">
      <table className="numbers">
        <thead>
          <tr>
            <th scope="col">Queue</th>
            <th scope="col">Access</th>
            <th scope="col" className="num">
              Backlog
            </th>
            <th scope="col" className="num">
              Running
            </th>
            <th scope="col" className="num">
              Delayed
            </th>
            <th scope="col" className="num">
              Oldest pending
            </th>
            <th scope="col" className="num">
              Workers
            </th>
          </tr>
        </thead>
        <tbody>
          {props.queues.map((q) => (
            <tr key={q.name}>
              <th scope="row" className="mono row-head">
                {q.name}
              </th>
              <td>
                <Access queue={q} />
              </td>
              <td className="num">{q.backlog}</td>
              <td className="num">{q.running}</td>
              <td className="num">{q.delayed}</td>
              <td className="num">{q.oldestPendingAgeMs === null ? <span className="muted">—</span> : formatDuration(q.oldestPendingAgeMs)}</td>
              <td className="num">{q.workers.length === 0 && q.backlog > 0 ? <span className="warn-text">0: tasks wait</span> : q.workers.length}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Access(props: { queue: QueueRow }) {
  const { allowed, reserved } = props.queue;
  if (!allowed) return <span className="mark mark-refused">reserved for other tenants</span>;
  if (reserved) return <span className="mark nowrap">reserved, allowed</span>;
  return <span className="muted nowrap">shared, allowed</span>;
}
