import { loopIterationText } from '@weft/contract';
import { useEffect, useState } from 'react';
import { useQuery } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { displayAttempt } from './model.js';
import { TASK_LOGS } from './operations.js';
import { TimeCell } from './RunsTable.js';
import type { Task, TaskAttempt } from './types.js';

/** The marker line the worker puts before a CODE attempt's kept tail. */
const CUT_MARKER = /^… [\d,]+ bytes cut …$/;

/**
 * The logs of the run's worker tasks (HTTP, CODE): one closed panel per task, each reading its
 * own task's attempts when opened, and again whenever the task's status or attempt changes while
 * it is open. Attempts are counted from 0, as the API and `weft logs` count them. A DO_WHILE
 * body task's panel names its iteration (`check, iteration 2`, counted from 1).
 */
export function TaskLogs(props: { runId: string; tasks: readonly Task[] }) {
  const rows = props.tasks.map((t, i) => ({ task: t, after: i === 0 ? null : props.tasks[i - 1]!.id })).filter((r) => r.task.queue !== null);
  if (rows.length === 0) return <p className="empty-state">No worker task yet: only HTTP and CODE nodes have logs.</p>;
  return (
    <div className="task-logs">
      {rows.map(({ task, after }) => (
        <TaskLogPanel key={task.id} runId={props.runId} task={task} after={after} />
      ))}
    </div>
  );
}

function TaskLogPanel(props: { runId: string; task: Task; after: string | null }) {
  const { task } = props;
  const [open, setOpen] = useState(false);
  const [result, reexecute] = useQuery<{ run: { tasks: { id: string; attempts: TaskAttempt[] }[] } | null }>({
    query: TASK_LOGS,
    variables: { id: props.runId, after: props.after },
    pause: !open,
    requestPolicy: 'network-only',
  });
  const state = `${task.status}#${task.attempt}`;
  useEffect(() => {
    if (open) reexecute({ requestPolicy: 'network-only' });
  }, [state]);
  const base = task.iteration === null ? task.nodeId : `${task.nodeId} [${task.iteration}]`;
  // A DO_WHILE body task: one panel per iteration, each named with its iteration.
  const name = task.loopIteration == null ? base : `${base}, ${loopIterationText(task.loopIteration)}`;
  const found = result.data?.run?.tasks.find((t) => t.id === task.id);
  return (
    <details
      className="panel task-log"
      data-task-logs={task.nodeId}
      data-task-iteration={task.iteration ?? undefined}
      data-loop-iteration={task.loopIteration ?? undefined}
      onToggle={(e) => setOpen(e.currentTarget.open)}
    >
      <summary>
        <span className="mono">{name}</span>{' '}
        <span className="muted">
          {task.nodeType} · {task.status}
        </span>
      </summary>
      {!open ? null : result.error ? (
        <ErrorText error={result.error} />
      ) : !found ? (
        <p className="loading" role="status">
          Loading logs…
        </p>
      ) : found.attempts.length === 0 ? (
        <p className="empty-state">No attempt has ended yet.</p>
      ) : (
        found.attempts.map((a) => <AttemptLogs key={a.attempt} name={name} attempt={a} />)
      )}
    </details>
  );
}

function AttemptLogs(props: { name: string; attempt: TaskAttempt }) {
  const { attempt: a } = props;
  const lines = a.logs ?? '';
  const firstEnd = lines.indexOf('\n');
  const first = firstEnd < 0 ? lines : lines.slice(0, firstEnd);
  const cut = CUT_MARKER.test(first);
  return (
    <section className="attempt-log" data-attempt={a.attempt} aria-label={`Logs of ${props.name}, attempt ${displayAttempt(a.attempt)}`}>
      <h3>
        attempt {displayAttempt(a.attempt)}{' '}
        {a.finishedAt && (
          <span className="muted">
            ended <TimeCell at={a.finishedAt} short />
          </span>
        )}
      </h3>
      {a.error && <p className="error">{a.error}</p>}
      {a.logs === null ? (
        <p className="muted">No logs: the attempt printed nothing.</p>
      ) : (
        <pre className="log-text" tabIndex={0}>
          {cut && <span className="log-cut">{first}</span>}
          {cut ? lines.slice(firstEnd) : lines}
        </pre>
      )}
    </section>
  );
}
