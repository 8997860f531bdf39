import { StatusBadge } from '../../components/StatusBadge.js';
import { TimeCell } from '../runs/RunsTable.js';
import { progressWords } from './batch.js';
import type { RunBatch } from './operations.js';

/** `part` of `total` as a CSS width, `0%` of nothing. */
const share = (part: number, total: number) => `${total > 0 ? Math.min(100, (part / total) * 100) : 0}%`;

/** A batch's status and a bar of its applied, skipped and failed runs out of its total, with the counts in words. */
export function BatchProgress(props: { batch: RunBatch }) {
  const b = props.batch;
  const done = b.applied + b.skipped + b.failed;
  const words = progressWords(b);
  return (
    <div className="batch-progress">
      <div
        className="progress"
        role="progressbar"
        aria-label={`Bulk action ${b.id}`}
        aria-valuemin={0}
        aria-valuemax={b.total}
        aria-valuenow={done}
        aria-valuetext={words}
      >
        <span className="progress-applied" style={{ width: share(b.applied, b.total) }} />
        <span className="progress-skipped" style={{ width: share(b.skipped, b.total) }} />
        <span className="progress-failed" style={{ width: share(b.failed, b.total) }} />
      </div>
      <p className="hint" data-testid="batch-progress" data-applied={b.applied} data-skipped={b.skipped} data-failed={b.failed} data-total={b.total}>
        {words}.{' '}
        {b.finishedAt && (
          <>
            {b.status === 'STOPPED' ? 'Stopped' : 'Finished'} <TimeCell at={b.finishedAt} />.
          </>
        )}
      </p>
    </div>
  );
}

/** A batch's status as a badge, `data-status` on its wrapper. */
export function BatchStatus(props: { status: string }) {
  return (
    <span data-testid="batch-status" data-status={props.status}>
      <StatusBadge status={props.status} />
    </span>
  );
}
