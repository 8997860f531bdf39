import { Link } from 'react-router';
import { StatusBadge } from '../../components/StatusBadge.js';
import { LabelList, TimeCell, WorkflowLink } from './RunsTable.js';
import { elapsed, formatDuration } from './time.js';
import { waitReasonLabel } from './wait.js';
import type { RunDetail } from './types.js';

/** The run's identity, status, times, parent, pause and error. */
export function RunHeader(props: { run: RunDetail }) {
  const { run } = props;
  const took = elapsed(run.createdAt, run.finishedAt);
  return (
    <header className="panel run-header">
      <div className="run-title">
        <h1>
          Run <span className="mono run-id">{run.id}</span>
        </h1>
        <span data-testid="run-status" data-status={run.status}>
          <StatusBadge status={run.status} />
        </span>
      </div>
      <dl className="facts">
        <div>
          <dt>Workflow</dt>
          <dd>
            <WorkflowLink workflowId={run.workflowId} version={run.version} />
          </dd>
        </div>
        <div>
          <dt>Version</dt>
          <dd>{run.version}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <TimeCell at={run.createdAt} />
          </dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>
            <TimeCell at={run.updatedAt} />
          </dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>
            <TimeCell at={run.finishedAt} />
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{took === null ? <span className="muted">{run.status === 'PAUSED' ? 'paused' : 'running'}</span> : formatDuration(took)}</dd>
        </div>
        <div>
          <dt>Last event</dt>
          <dd>#{run.seq}</dd>
        </div>
        <div>
          <dt>Priority</dt>
          <dd title="1 runs first, 5 last">{run.priority}</dd>
        </div>
        <div>
          <dt>Labels</dt>
          <dd data-testid="run-labels">
            <LabelList labels={run.labels} />
          </dd>
        </div>
        {run.deadlineAt && (
          <div title="timeout_seconds after the run started or was last retried: then it ends TIMED_OUT">
            <dt>Deadline</dt>
            <dd data-testid="run-deadline">
              <TimeCell at={run.deadlineAt} />
            </dd>
          </div>
        )}
        {run.pausedAt && (
          <div>
            <dt>Paused</dt>
            <dd data-testid="run-paused-at">
              <TimeCell at={run.pausedAt} />
            </dd>
          </div>
        )}
        {run.concurrencyKey !== null && (
          <div>
            <dt>Concurrency key</dt>
            <dd className="mono">{run.concurrencyKey === '' ? '""' : run.concurrencyKey}</dd>
          </div>
        )}
        {run.scheduleId && (
          <>
            <div>
              <dt>Schedule</dt>
              <dd>
                <Link className="mono" to={`/schedules/${run.scheduleId}`}>
                  {run.scheduleId}
                </Link>
              </dd>
            </div>
            <div>
              <dt>Nominal time</dt>
              <dd>
                <TimeCell at={run.nominalTime} />
              </dd>
            </div>
          </>
        )}
        {run.parentRunId && (
          <div>
            <dt>Parent run</dt>
            <dd>
              <Link className="mono" to={`/runs/${run.parentRunId}`}>
                {run.parentRunId}
              </Link>
              {run.depth > 1 && <span className="muted"> (depth {run.depth})</span>}
            </dd>
          </div>
        )}
      </dl>
      {run.waitDetail && (
        <div className="run-wait" data-testid="run-wait" role="status">
          <strong>Waiting{run.waitReason ? ` (${waitReasonLabel(run.waitReason)})` : ''}:</strong> {run.waitDetail}
        </div>
      )}
      {run.status === 'PAUSED' && (
        <div className="run-paused" data-testid="run-paused" role="status">
          <strong>Paused:</strong> <span className="pre-wrap">{run.pauseReason ?? 'no reason given'}</span>
          <span className="muted"> (nothing new is dispatched until the run is resumed)</span>
        </div>
      )}
      {run.error && (
        <div className="run-error">
          <strong>{run.status === 'CANCELLED' ? 'Cancelled' : run.status === 'TIMED_OUT' ? 'Timed out' : 'Error'}:</strong>{' '}
          <span className="pre-wrap">{run.error}</span>
        </div>
      )}
    </header>
  );
}
