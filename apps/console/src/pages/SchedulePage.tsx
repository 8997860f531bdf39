import { useCallback, useState, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { useCan } from '../session/session.js';
import { useAutoRefresh } from './queues/useAutoRefresh.js';
import { JsonField } from './runs/JsonField.js';
import { TimeCell } from './runs/RunsTable.js';
import { BackfillProgress } from './schedules/BackfillProgress.js';
import { OVERLAP_MEANS, SKIP_REASONS, skippedTotal, timingText, versionText } from './schedules/format.js';
import { SCHEDULE, type ScheduleDetail } from './schedules/operations.js';
import { ScheduleActions } from './schedules/ScheduleActions.js';
import { ScheduleForm } from './schedules/ScheduleForm.js';
import { ScheduleRuns } from './schedules/ScheduleRuns.js';
import { PausedMark, ScheduleWorkflow } from './schedules/SchedulesTable.js';
import { UpcomingTimes } from './schedules/UpcomingTimes.js';
import './admin.css';
import './runs.css';
import './schedules/schedules.css';

/** How often the page reads the schedule again (its counters, runs and next times move by the clock). */
const REFRESH_MS = 10_000;

/** `/schedules/:scheduleId`: one schedule in full, and an operator's actions on it. */
export function SchedulePage() {
  const scheduleId = useParams().scheduleId ?? '';
  return <ScheduleView key={scheduleId} scheduleId={scheduleId} />;
}

function ScheduleView(props: { scheduleId: string }) {
  const can = useCan();
  const [{ data, error, fetching }, reexecute] = useQuery<{ schedule: ScheduleDetail | null }>({ query: SCHEDULE, variables: { id: props.scheduleId } });
  const refresh = useCallback(() => reexecute({ requestPolicy: 'network-only' }), [reexecute]);
  useAutoRefresh(refresh, REFRESH_MS);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const s = data?.schedule;

  return (
    <section className="schedule-page" aria-labelledby="schedule-title">
      <p className="crumbs">
        <Link to="/schedules">Schedules</Link> /
      </p>
      <div className="run-title">
        <h1 id="schedule-title">
          Schedule <span className="mono schedule-id">{props.scheduleId}</span>
        </h1>
        {s && <PausedMark paused={s.paused} />}
      </div>
      {fetching && !data && (
        <p className="loading" role="status">
          Loading the schedule…
        </p>
      )}
      <ErrorText error={error} />
      {s && (
        <>
          <ScheduleFacts schedule={s} />
          <PauseNote schedule={s} />
          {s.lastError && (
            <div className="run-error" role="note">
              <strong>Last error:</strong> <span className="pre-wrap">{s.lastError}</span>
            </div>
          )}
          {saved && !editing && (
            <p className="success" role="status">
              Saved the schedule.
            </p>
          )}
          {can.operate && editing && (
            <ScheduleForm
              schedule={s}
              onCancel={() => setEditing(false)}
              onDone={() => {
                setEditing(false);
                setSaved(true);
                refresh();
              }}
            />
          )}
          <div className={can.operate ? 'grid-2 schedule-main' : 'schedule-main'}>
            <div>
              <section aria-labelledby="upcoming-title">
                <h2 id="upcoming-title">Upcoming fire times</h2>
                <UpcomingTimes times={s.upcoming} timeZone={s.timeZone} paused={s.paused} />
              </section>
              <Counters schedule={s} />
            </div>
            {can.operate && (
              <ScheduleActions
                schedule={s}
                onChanged={refresh}
                onEdit={() => {
                  setSaved(false);
                  setEditing(true);
                }}
              />
            )}
          </div>
          <section aria-labelledby="schedule-runs-title">
            <div className="version-head">
              <h2 id="schedule-runs-title">Recent runs</h2>
              <Link to={`/runs?schedule=${encodeURIComponent(s.id)}`}>All runs of this schedule</Link>
            </div>
            <ScheduleRuns runs={s.recentRuns} />
          </section>
          <section aria-labelledby="backfills-title">
            <h2 id="backfills-title">Backfills</h2>
            {s.backfills.length === 0 ? (
              <p className="empty-state">No backfills.</p>
            ) : (
              <ul className="backfills">
                {s.backfills.map((b) => (
                  <BackfillProgress key={b.id} backfill={b} paused={s.paused} onProgress={refresh} />
                ))}
              </ul>
            )}
          </section>
          <div className="run-data schedule-data">
            <section className="panel" aria-labelledby="schedule-input-title">
              <h2 id="schedule-input-title">Input</h2>
              <JsonField value={s.input} label="Schedule input" redacted={false} />
            </section>
            <section className="panel" aria-labelledby="schedule-config-title">
              <h2 id="schedule-config-title">Config</h2>
              <JsonField value={s.config} label="Schedule config" redacted={false} />
            </section>
          </div>
        </>
      )}
    </section>
  );
}

/** Every field of the schedule, as a list of terms. */
function ScheduleFacts(props: { schedule: ScheduleDetail }) {
  const s = props.schedule;
  const facts: [string, ReactNode][] = [
    ['Workflow', <ScheduleWorkflow workflowId={s.workflowId} version={s.version} />],
    ['Version', versionText(s.version)],
    ['Timing', timingText(s)],
    ['Time zone', s.timeZone],
    ['Overlap policy', <span title={OVERLAP_MEANS[s.overlapPolicy]}>{s.overlapPolicy}</span>],
    ['Catch-up', `${s.catchUpSeconds} s`],
    ['Jitter', `up to ${s.jitterSeconds} s`],
    ['Next fire', s.paused ? <span className="muted">none while paused</span> : <TimeCell at={s.nextFireAt} />],
    ['Start', s.startAt ? <TimeCell at={s.startAt} /> : <span className="muted">at creation</span>],
    ['End', s.endAt ? <TimeCell at={s.endAt} /> : <span className="muted">never</span>],
    ['Note', s.note ?? <span className="muted">—</span>],
    ['Created', <TimeCell at={s.createdAt} />],
    ['Updated', <TimeCell at={s.updatedAt} />],
  ];
  return (
    <dl className="facts panel schedule-facts">
      {facts.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Who paused (or last unpaused) the schedule, when, and their note. */
function PauseNote(props: { schedule: ScheduleDetail }) {
  const s = props.schedule;
  if (!s.paused && !s.pausedBy && !s.pauseNote) return null;
  return (
    <p className={s.paused ? 'notice pause-note' : 'hint pause-note'} data-testid="pause-note">
      {s.paused ? 'Paused' : 'Last unpaused'}
      {s.pausedBy && (
        <>
          {' '}
          by <strong>{s.pausedBy}</strong>
        </>
      )}
      {s.pausedAt && (
        <>
          {' '}
          at <TimeCell at={s.pausedAt} />
        </>
      )}
      {s.pauseNote ? <>: “{s.pauseNote}”</> : ' (no note)'}
    </p>
  );
}

/** Runs started, skips by reason, the last fire and the buffer. */
function Counters(props: { schedule: ScheduleDetail }) {
  const s = props.schedule;
  return (
    <section aria-labelledby="counters-title">
      <h2 id="counters-title">Fires</h2>
      <dl className="facts">
        <div>
          <dt>Runs started</dt>
          <dd data-testid="fired-count">{s.firedCount}</dd>
        </div>
        <div>
          <dt>Skipped</dt>
          <dd>{skippedTotal(s.skipped)}</dd>
        </div>
        <div>
          <dt>Last nominal time</dt>
          <dd>
            <TimeCell at={s.lastNominalTime} />
          </dd>
        </div>
        <div>
          <dt>Last fired</dt>
          <dd>
            <TimeCell at={s.lastFiredAt} />
          </dd>
        </div>
        <div>
          <dt>Last run</dt>
          <dd>
            {s.lastRunId ? (
              <Link className="mono" to={`/runs/${s.lastRunId}`}>
                {s.lastRunId}
              </Link>
            ) : (
              <span className="muted">—</span>
            )}
          </dd>
        </div>
      </dl>
      <div className="table-wrap skips">
        <table>
          <caption className="visually-hidden">Skipped nominal times by reason</caption>
          <thead>
            <tr>
              <th scope="col">Skip reason</th>
              <th scope="col" className="num">
                Count
              </th>
              <th scope="col">Means</th>
            </tr>
          </thead>
          <tbody>
            {SKIP_REASONS.map((r) => (
              <tr key={r.key}>
                <th scope="row" className="row-head">
                  {r.label}
                </th>
                <td className="num">{s.skipped[r.key]}</td>
                <td className="muted">{r.means}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {s.bufferedTimes.length > 0 && (
        <p className="hint">
          Buffered ({s.bufferedTimes.length}):{' '}
          {s.bufferedTimes.map((t, i) => (
            <span key={t}>
              {i > 0 && ', '}
              <TimeCell at={t} />
            </span>
          ))}
        </p>
      )}
    </section>
  );
}
