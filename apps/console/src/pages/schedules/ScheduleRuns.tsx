import { Link } from 'react-router';
import { StatusBadge } from '../../components/StatusBadge.js';
import { TimeCell } from '../runs/RunsTable.js';
import type { ScheduleRun } from './operations.js';

/** The schedule's newest runs: each links to its page, with its status and nominal time. */
export function ScheduleRuns(props: { runs: readonly ScheduleRun[] }) {
  if (!props.runs.length) return <p className="empty-state">No runs yet.</p>;
  return (
    <div className="table-wrap">
      <table className="schedule-runs">
        <caption className="visually-hidden">Recent runs of this schedule, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col">Nominal time</th>
            <th scope="col">Created</th>
            <th scope="col">Finished</th>
          </tr>
        </thead>
        <tbody>
          {props.runs.map((r) => (
            <tr key={r.id} data-run-id={r.id} data-status={r.status}>
              <td>
                <Link className="mono run-id" to={`/runs/${r.id}`}>
                  {r.id}
                </Link>
              </td>
              <td>
                <StatusBadge status={r.status} />
              </td>
              <td className="nowrap">
                <TimeCell at={r.nominalTime} />
              </td>
              <td className="nowrap">
                <TimeCell at={r.createdAt} />
              </td>
              <td className="nowrap">
                <TimeCell at={r.finishedAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
