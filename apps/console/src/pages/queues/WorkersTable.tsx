import { TimeCell } from '../runs/RunsTable.js';
import { ago } from './format.js';
import type { WorkerRow } from './operations.js';

/** The live workers serving a queue the tenant may use (their hosts are the operator's: not shown to tenants). */
export function WorkersTable(props: { workers: WorkerRow[]; now: number }) {
  const { workers, now } = props;
  if (!workers.length) return <p className="muted">No live worker serves a queue this tenant may use: tasks wait until one starts.</p>;
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Worker</th>
            <th scope="col">Queues</th>
            <th scope="col" className="num">
              Concurrency
            </th>
            <th scope="col">Version</th>
            <th scope="col">Started</th>
            <th scope="col">Last heartbeat</th>
            <th scope="col">Draining since</th>
          </tr>
        </thead>
        <tbody>
          {workers.map((w) => (
            <tr key={w.id}>
              <th scope="row" className="row-head">
                <code title={w.id}>{w.id.slice(0, 8)}</code>
              </th>
              <td className="mono">{w.queues.join(', ')}</td>
              <td className="num">{w.concurrency}</td>
              <td className="mono">{w.version}</td>
              <td>
                <TimeCell at={w.startedAt} />
              </td>
              <td>
                <TimeCell at={w.lastHeartbeatAt} /> <span className="muted nowrap">({ago(w.lastHeartbeatAt, now)})</span>
              </td>
              <td>
                {w.drainingSince ? (
                  <>
                    <span className="mark mark-draining">draining</span> <TimeCell at={w.drainingSince} />
                  </>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
