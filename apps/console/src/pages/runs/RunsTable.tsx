import { Link } from 'react-router';
import { StatusBadge } from '../../components/StatusBadge.js';
import { labelEntries } from './labels.js';
import { elapsed, formatDuration, formatTime, formatTimeShort } from './time.js';
import type { RunSummary } from './types.js';

/** A time cell: local time shown (`short`: without today's date), the instant in `dateTime` and the title. */
export function TimeCell(props: { at: string | null | undefined; short?: boolean }) {
  if (!props.at) return <span className="muted">—</span>;
  return (
    <time dateTime={props.at} title={props.at}>
      {props.short ? formatTimeShort(props.at) : formatTime(props.at)}
    </time>
  );
}

/** A workflow@version link to the workflow's page showing that version. */
export function WorkflowLink(props: { workflowId: string; version: number }) {
  return (
    <Link to={`/workflows/${encodeURIComponent(props.workflowId)}?version=${props.version}`}>
      {props.workflowId}@{props.version}
    </Link>
  );
}

/** A run's labels as `key=value` chips (nothing for none), each `<li data-label-key>`. */
export function LabelList(props: { labels: RunSummary['labels'] }) {
  const entries = labelEntries(props.labels);
  if (!entries.length) return <span className="muted">—</span>;
  return (
    <ul className="labels">
      {entries.map(([key, value]) => (
        <li key={key} className="label-chip mono" data-label-key={key}>
          {key}={value}
        </li>
      ))}
    </ul>
  );
}

/** The runs of one page, newest first; each row is `<tr data-run-id>` with its status badge. */
export function RunsTable(props: { runs: readonly RunSummary[]; caption: string }) {
  return (
    <div className="table-wrap">
      <table className="runs-table">
        <caption className="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Workflow</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Finished</th>
            <th scope="col">Duration</th>
            <th scope="col">Labels</th>
          </tr>
        </thead>
        <tbody>
          {props.runs.map((run) => {
            const took = elapsed(run.createdAt, run.finishedAt);
            return (
              <tr key={run.id} data-run-id={run.id} data-status={run.status}>
                <td>
                  <Link className="mono run-id" to={`/runs/${run.id}`}>
                    {run.id}
                  </Link>
                </td>
                <td>
                  <WorkflowLink workflowId={run.workflowId} version={run.version} />
                </td>
                <td>
                  <StatusBadge status={run.status} />
                </td>
                <td className="nowrap">
                  <TimeCell at={run.createdAt} />
                </td>
                <td className="nowrap">
                  <TimeCell at={run.finishedAt} />
                </td>
                <td className="nowrap">{took === null ? <span className="muted">—</span> : formatDuration(took)}</td>
                <td>
                  <LabelList labels={run.labels} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
