import { decisionText, loopIterationText, loopProgress } from '@weft/contract';
import { useState } from 'react';
import { StatusBadge } from '../../components/StatusBadge.js';
import { JsonField } from './JsonField.js';
import { recentIterations, taskRows, type RunLoops } from './loops.js';
import { displayAttempt } from './model.js';
import { splitTaskInput } from './task-input.js';
import { waitReasonLabel } from './wait.js';
import { TimeCell } from './RunsTable.js';
import type { Task } from './types.js';

/** No DO_WHILE loops: every task in creation order. */
const NO_LOOPS: RunLoops = { loopOf: new Map(), maxIterations: new Map() };

/**
 * The run's tasks in creation order (a for_each node's iterations after its own task), each
 * `<tr data-task-node>`; the rows of the node selected on the graph are highlighted. A DO_WHILE
 * node's row says `iteration 3 of 5`; its body tasks follow it grouped by iteration, each group
 * under a `tr.loop-iteration` head (`data-loop`, `data-loop-iteration`) and each body task
 * tagged with its iteration (counted from 1; `data-loop-iteration` holds the API's 0-based one);
 * a loop's last 3 iterations (ITERATIONS_SHOWN, loops.ts) are listed, a `tr.loop-earlier` button shows the rest.
 * Input and
 * output open from a one-line preview (a CODE node's program apart, collapsed), a long error
 * from its first words; a sensitive node's read "redacted". The table scrolls sideways in its
 * own box.
 */
export function TaskTable(props: { tasks: readonly Task[]; selectedNodeId: string | null; sensitive: ReadonlySet<string> | undefined; loops?: RunLoops }) {
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  if (props.tasks.length === 0) return <p className="empty-state">No task yet: the run has not reached a node.</p>;
  const loops = props.loops ?? NO_LOOPS;
  const rows = recentIterations(taskRows(props.tasks, loops), expanded);
  return (
    <div className="table-wrap">
      <table className="task-table">
        <caption className="visually-hidden">Tasks of the run, in creation order, a loop's body tasks under the loop by iteration</caption>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col" title="1 for the first execution">
              Attempt
            </th>
            <th scope="col">Queue</th>
            <th scope="col">Created</th>
            <th scope="col">Updated</th>
            <th scope="col">Finished</th>
            <th scope="col">Waiting for</th>
            <th scope="col">Error</th>
            <th scope="col">Input</th>
            <th scope="col">Output</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) =>
            row.kind === 'earlier' ? (
              <tr key={`${row.loop}#earlier`} className="loop-earlier" data-loop={row.loop}>
                <td colSpan={TASK_COLUMNS}>
                  <button type="button" className="quiet small" onClick={() => setExpanded(new Set([...expanded, row.loop]))}>
                    Show {row.iterations} earlier {row.iterations === 1 ? 'iteration' : 'iterations'} of {row.loop}
                  </button>{' '}
                  <span className="muted">({row.tasks === 1 ? '1 task' : `${row.tasks} tasks`})</span>
                </td>
              </tr>
            ) : row.kind === 'iteration' ? (
              <tr key={`${row.loop}#${row.iteration}`} className="loop-iteration" data-loop={row.loop} data-loop-iteration={row.iteration}>
                <th scope="colgroup" colSpan={TASK_COLUMNS} className="mono">
                  {row.loop} · {loopIterationText(row.iteration)} <span className="muted">({row.tasks === 1 ? '1 task' : `${row.tasks} tasks`})</span>
                </th>
              </tr>
            ) : (
              <TaskRow
                key={row.task.id}
                task={row.task}
                loop={row.loop}
                maxIterations={loops.maxIterations}
                selected={row.task.nodeId === props.selectedNodeId}
                sensitive={props.sensitive}
              />
            ),
          )}
        </tbody>
      </table>
    </div>
  );
}

/** The columns of the task table. */
const TASK_COLUMNS = 12;

/**
 * One task's row. The node cell names a for_each iteration `node [i]`, a body task's iteration
 * (`iteration 2`, indented under its loop) and a DO_WHILE node's progress (`iteration 3 of 5`).
 */
function TaskRow(props: {
  task: Task;
  loop: string | null;
  maxIterations: ReadonlyMap<string, number | null>;
  selected: boolean;
  sensitive: ReadonlySet<string> | undefined;
}) {
  const { task: t, loop } = props;
  const looped = t.loopIteration != null;
  const ownLoop = looped && props.maxIterations.has(t.nodeId);
  const base = t.iteration === null ? t.nodeId : `${t.nodeId} [${t.iteration}]`;
  const name = looped && !ownLoop ? `${base}, ${loopIterationText(t.loopIteration!)}` : base;
  const redacted = props.sensitive === undefined ? undefined : props.sensitive.has(t.nodeId);
  const shown = splitTaskInput(t.nodeType, t.input);
  const classes = [props.selected ? 'selected' : '', loop ? 'in-loop' : ''].filter(Boolean).join(' ');
  return (
    <tr
      data-task-node={t.nodeId}
      data-task-iteration={t.iteration ?? undefined}
      data-loop-iteration={looped ? t.loopIteration! : undefined}
      data-status={t.status}
      className={classes || undefined}
    >
      <th scope="row" className="mono">
        {base}
        {t.iteration !== null && <span className="visually-hidden"> (iteration {t.iteration})</span>}
        {looped && !ownLoop && <span className="loop-tag">{loopIterationText(t.loopIteration!)}</span>}
        {ownLoop && <div className="loop-progress muted">{loopProgress(t.loopIteration!, props.maxIterations.get(t.nodeId))}</div>}
      </th>
      <td className="nowrap">
        {t.nodeType}
        <Branches task={t} />
      </td>
      <td>
        <StatusBadge status={t.status} />
      </td>
      <td>{displayAttempt(t.attempt)}</td>
      <td>{t.queue ?? <span className="muted">—</span>}</td>
      <td className="task-time">
        <TimeCell at={t.createdAt} short />
      </td>
      <td className="task-time">
        <TimeCell at={t.updatedAt} short />
      </td>
      <td className="task-time">
        <TimeCell at={t.finishedAt} short />
      </td>
      <td className="task-waiting">
        <Waiting task={t} />
      </td>
      <td className="task-error">{t.error ? <ClippedText text={t.error} label={`Error of ${name}`} /> : <span className="muted">—</span>}</td>
      <td className="task-json">
        {(shown.code === null || shown.input !== null) && <JsonField value={shown.input} redacted={redacted} label={`Input of ${name}`} mode="details" />}
        {shown.code !== null && <CodeField code={shown.code} label={`Code of ${name}`} />}
      </td>
      <td className="task-json">
        <JsonField value={t.output} redacted={redacted} label={`Output of ${name}`} mode="details" />
      </td>
    </tr>
  );
}

/**
 * Where a SWITCH (or a node with conditional edges) routed: `→ a, b`; a SWITCH that took no
 * branch says so with each condition it evaluated and its value, one that fell back on its
 * default `default taken: <id>`.
 */
function Branches(props: { task: Task }) {
  const { branches, decision } = props.task;
  const said = decision ? decisionText(decision) : undefined;
  if (decision && said) {
    if (decision.defaultTaken)
      return (
        <div className="task-decision muted" data-decision="default">
          {said}
        </div>
      );
    return (
      <div className="task-decision" data-decision="none">
        <span className="mark">no branch taken</span>
        <ul className="muted">
          {decision.conditions.map((c) => (
            <li key={c.to}>
              → {c.to}: <code>{c.condition ?? '(no condition)'}</code> = {String(c.value)}
            </li>
          ))}
        </ul>
      </div>
    );
  }
  return branches?.length ? <div className="muted">→ {branches.join(', ')}</div> : null;
}

/**
 * What a task waits for: its signal, and while it waits, when it wakes up (timer or timeout);
 * for a QUEUED task, why it is not running yet.
 */
function Waiting(props: { task: Task }) {
  const { task } = props;
  const parts = [];
  if (task.waitDetail) {
    parts.push(
      <div key="q" className="task-wait" data-wait-reason={task.waitReason ?? undefined}>
        {task.waitReason && <span className="mark">{waitReasonLabel(task.waitReason)}</span>} <span className="pre-wrap">{task.waitDetail}</span>
      </div>,
    );
  }
  if (task.awaitedSignal)
    parts.push(
      <div key="s">
        signal <code>{task.awaitedSignal}</code>
      </div>,
    );
  if (task.wakeAt && task.status === 'WAITING')
    parts.push(
      <div key="w">
        until <TimeCell at={task.wakeAt} short />
      </div>,
    );
  return parts.length ? <>{parts}</> : <span className="muted">—</span>;
}

/** How much of an error its row shows before it is opened. */
const ERROR_PREVIEW_CHARS = 80;

/** A long text's first words, ending in an ellipsis, that open into the whole text (also its title). */
function ClippedText(props: { text: string; label: string }) {
  const { text } = props;
  if (text.length <= ERROR_PREVIEW_CHARS && !text.includes('\n')) return <span className="pre-wrap">{text}</span>;
  return (
    <details className="clipped">
      <summary title={text}>
        {`${text.split('\n', 1)[0]!.slice(0, ERROR_PREVIEW_CHARS)}…`}
        <span className="visually-hidden"> {props.label}</span>
      </summary>
      <div className="pre-wrap">{text}</div>
    </details>
  );
}

/** A CODE node's program, collapsed to its size; opened, the program as written. */
function CodeField(props: { code: string; label: string }) {
  const lines = props.code.split('\n').length;
  return (
    <details className="json-details code-details">
      <summary>
        code <span className="muted">({lines === 1 ? `${props.code.length} chars` : `${lines} lines`})</span>
        <span className="visually-hidden"> {props.label}</span>
      </summary>
      <pre className="json" role="group" aria-label={props.label} tabIndex={0}>
        {props.code}
      </pre>
    </details>
  );
}
