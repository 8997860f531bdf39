import { Link } from 'react-router';
import { TimeCell } from '../runs/RunsTable.js';
import { overlapText, skippedTotal, timingText, versionText } from './format.js';
import type { ScheduleSummary } from './operations.js';

/** "paused" or "active", in words. */
export function PausedMark(props: { paused: boolean }) {
  return props.paused ? <span className="mark mark-paused">paused</span> : <span className="mark mark-active">active</span>;
}

/** A workflow@version link (`@default` for an unpinned schedule) to the workflow's page. */
export function ScheduleWorkflow(props: { workflowId: string; version: number | null }) {
  const href = `/workflows/${encodeURIComponent(props.workflowId)}${props.version === null ? '' : `?version=${props.version}`}`;
  return (
    <Link to={href} className="nowrap">
      {props.workflowId}@{versionText(props.version)}
    </Link>
  );
}

/** One page of schedules; each row is `<tr data-schedule-id>` and links to the schedule's page. */
export function SchedulesTable(props: { schedules: readonly ScheduleSummary[]; caption: string }) {
  return (
    <div className="table-wrap">
      <table className="schedules-table">
        <caption className="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Schedule</th>
            <th scope="col">Workflow</th>
            <th scope="col">Timing</th>
            <th scope="col">Overlap</th>
            <th scope="col">State</th>
            <th scope="col">Next fire</th>
            <th scope="col" className="num">
              Fired
            </th>
            <th scope="col" className="num">
              Skipped
            </th>
          </tr>
        </thead>
        <tbody>
          {props.schedules.map((s) => (
            <tr key={s.id} data-schedule-id={s.id} data-paused={s.paused}>
              <td>
                <Link className="mono schedule-id" to={`/schedules/${s.id}`}>
                  {s.id}
                </Link>
                {s.note && <span className="schedule-note muted">{s.note}</span>}
              </td>
              <td>
                <ScheduleWorkflow workflowId={s.workflowId} version={s.version} />
              </td>
              <td className="timing-cell">{timingText(s)}</td>
              <td className="nowrap">{overlapText(s.overlapPolicy)}</td>
              <td>
                <PausedMark paused={s.paused} />
              </td>
              <td className="nowrap" data-testid="next-fire">
                {s.paused ? (
                  <span className="muted">none while paused</span>
                ) : s.nextFireAt ? (
                  <TimeCell at={s.nextFireAt} />
                ) : (
                  <span className="muted">none left</span>
                )}
              </td>
              <td className="num">{s.firedCount}</td>
              <td className="num">{skippedTotal(s.skipped)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
