import { useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { errorText } from '../api/errors.js';
import { DagView } from '../components/dag/DagView.js';
import { ErrorText } from '../components/ErrorText.js';
import { HistoryTimeline } from './runs/HistoryTimeline.js';
import { JsonField } from './runs/JsonField.js';
import { runLoops } from './runs/loops.js';
import { childRunsByNode, isFinished, nodeIds } from './runs/model.js';
import { RunActions } from './runs/RunActions.js';
import { RunHeader } from './runs/RunHeader.js';
import { TaskLogs } from './runs/TaskLogs.js';
import { TaskTable } from './runs/TaskTable.js';
import type { RunDetail } from './runs/types.js';
import { useRun } from './runs/useRun.js';
import './runs.css';

/** `/runs/:runId`: one run, live. A new run id starts from scratch (no selection carried over). */
export function RunPage() {
  const { runId = '' } = useParams();
  return <RunView key={runId} runId={runId} />;
}

function RunView(props: { runId: string }) {
  const { run, fetching, error, liveError, sensitive } = useRun(props.runId);
  if (!run) {
    return (
      <section className="run-page">
        <p>
          <Link to="/runs">← Runs</Link>
        </p>
        {error ? (
          <ErrorText error={error} />
        ) : fetching ? (
          <p className="loading" role="status">
            Loading run…
          </p>
        ) : null}
      </section>
    );
  }
  return <RunDetails run={run} liveError={liveError ? errorText(liveError) : null} sensitive={sensitive} />;
}

function RunDetails(props: { run: RunDetail; liveError: string | null; sensitive: ReadonlySet<string> | undefined }) {
  const { run } = props;
  const [selected, setSelected] = useState<string | null>(null);
  const childRuns = useMemo(() => childRunsByNode(run.tasks, run.children), [run.tasks, run.children]);
  const loops = useMemo(() => runLoops(run.graph), [run.graph]);
  // A run is retried from a loop, never from a node of its body (the API refuses it).
  const nodes = useMemo(() => nodeIds(run).filter((n) => !loops.loopOf.has(n)), [run, loops]);

  return (
    <section className="run-page" aria-label={`Run ${run.id}`}>
      <p className="crumbs">
        <Link to="/runs">← Runs</Link>
      </p>
      <RunHeader run={run} />
      <p className="muted live-note">{props.liveError ? `Live updates unavailable: ${props.liveError}` : 'Live: this page follows the run as it changes.'}</p>
      <div className="grid-2 run-main">
        <section className="panel run-graph" aria-labelledby="run-graph-title">
          <h2 id="run-graph-title">Graph</h2>
          <DagView graph={run.graph} label={`DAG of run ${run.id}`} selectedNodeId={selected} onSelectNode={setSelected} childRuns={childRuns} />
          {selected && (
            <p className="hint">
              Selected <code>{selected}</code>.{' '}
              <button type="button" className="quiet small" onClick={() => setSelected(null)}>
                Clear selection
              </button>
            </p>
          )}
        </section>
        <RunActions run={run} nodeIds={nodes} loopOf={loops.loopOf} selectedNodeId={selected} onSelectNode={setSelected} />
      </div>
      <div className="run-data">
        <section className="panel" aria-labelledby="run-input-title">
          <h2 id="run-input-title">Input</h2>
          <JsonField value={run.input} label="Run input" redacted={false} />
        </section>
        <section className="panel" aria-labelledby="run-config-title">
          <h2 id="run-config-title">Config</h2>
          <JsonField value={run.config} label="Run config" redacted={false} />
        </section>
        <section className="panel" aria-labelledby="run-output-title">
          <h2 id="run-output-title">Output</h2>
          {run.output === null || run.output === undefined ? (
            <span className="json-none">
              {run.status === 'SUCCEEDED' ? 'null' : isFinished(run.status) ? 'none: the run did not succeed' : 'none yet (set once the run succeeds)'}
            </span>
          ) : (
            <JsonField value={run.output} label="Run output" redacted={false} />
          )}
        </section>
      </div>
      <section aria-labelledby="run-tasks-title">
        <h2 id="run-tasks-title">
          Tasks <span className="muted count">({run.tasks.length})</span>
        </h2>
        <TaskTable tasks={run.tasks} selectedNodeId={selected} sensitive={props.sensitive} loops={loops} />
      </section>
      <section aria-labelledby="run-logs-title">
        <h2 id="run-logs-title">Logs</h2>
        <TaskLogs runId={run.id} tasks={run.tasks} />
      </section>
      <section aria-labelledby="run-history-title">
        <h2 id="run-history-title">
          History <span className="muted count">({run.history.length} events)</span>
        </h2>
        <HistoryTimeline history={run.history} />
      </section>
    </section>
  );
}
