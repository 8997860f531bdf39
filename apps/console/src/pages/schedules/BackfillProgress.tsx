import { useEffect, useRef } from 'react';
import { useQuery } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { TimeCell } from '../runs/RunsTable.js';
import { SCHEDULE_BACKFILL, type ScheduleBackfill } from './operations.js';

/** How often an unfinished backfill's progress is read. */
export const BACKFILL_POLL_MS = 2000;

/** `part` of `total` as a CSS width, `0%` of nothing. */
const share = (part: number, total: number) => `${total > 0 ? Math.min(100, (part / total) * 100) : 0}%`;

/**
 * One backfill's range and progress: a bar of started and skipped times out of the total, read
 * again every 2 s (scheduleBackfill) until it finishes. `onProgress` is told each time more
 * times are done (the schedule's counters and runs moved), and once it has finished.
 */
export function BackfillProgress(props: { backfill: ScheduleBackfill; paused: boolean; onProgress: () => void }) {
  const finishedBefore = props.backfill.finishedAt !== null;
  const [{ data, error }, reexecute] = useQuery<{ scheduleBackfill: ScheduleBackfill | null }>({
    query: SCHEDULE_BACKFILL,
    variables: { id: props.backfill.id },
    requestPolicy: 'network-only',
    pause: finishedBefore,
  });
  const b = data?.scheduleBackfill ?? props.backfill;
  const finished = b.finishedAt !== null;
  const done = b.started + b.skipped;

  useEffect(() => {
    if (finished) return;
    const timer = window.setInterval(() => reexecute({ requestPolicy: 'network-only' }), BACKFILL_POLL_MS);
    return () => window.clearInterval(timer);
  }, [finished, reexecute]);

  const seen = useRef(done);
  const onProgress = useRef(props.onProgress);
  onProgress.current = props.onProgress;
  useEffect(() => {
    if (done !== seen.current || (finished && !finishedBefore)) onProgress.current();
    seen.current = done;
  }, [done, finished, finishedBefore]);

  const words = `${done} of ${b.total} done: ${b.started} started, ${b.skipped} skipped, ${b.pending} pending`;
  return (
    <li className="backfill" data-backfill-id={b.id} data-finished={finished}>
      <div className="backfill-head">
        <span>
          <TimeCell at={b.from} /> → <TimeCell at={b.to} />
        </span>
        <span className={finished ? 'mark mark-active' : 'mark mark-paused'}>
          {finished ? 'finished' : props.paused ? 'waiting (schedule paused)' : 'running'}
        </span>
      </div>
      <div
        className="progress"
        role="progressbar"
        aria-label={`Backfill ${b.id}`}
        aria-valuemin={0}
        aria-valuemax={b.total}
        aria-valuenow={done}
        aria-valuetext={words}
      >
        <span className="progress-started" style={{ width: share(b.started, b.total) }} />
        <span className="progress-skipped" style={{ width: share(b.skipped, b.total) }} />
      </div>
      <p className="hint" data-testid="backfill-progress">
        {words}.{' '}
        {finished ? (
          <>
            Finished <TimeCell at={b.finishedAt} />.
          </>
        ) : b.nextNominalTime ? (
          <>
            Next: <TimeCell at={b.nextNominalTime} />.
          </>
        ) : null}
      </p>
      <ErrorText error={error} />
    </li>
  );
}
