import { useId, useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { parseJsonField, prettyJson } from './json.js';
import { isFinished, isResumable, iterationsToRetry } from './model.js';
import { RETRY_RUN } from './operations.js';
import type { RunDetail } from './types.js';

/**
 * Restarts a finished run from a node (the same run id: the page follows it live). The node is
 * the one selected on the graph or in "Retry from node"; input, config and version default to
 * the run's. A field that is not valid JSON is named before anything is sent. On a `for_each`
 * node with failed, skipped or cancelled iterations, "Retry failed iterations" runs only those
 * again (retryRun with failedIterationsOnly), keeping the completed ones.
 */
export function RetryRunForm(props: {
  run: RunDetail;
  nodeIds: readonly string[];
  /** Body node id → its DO_WHILE node's id: a body node chosen on the graph is no node to retry from. */
  loopOf?: ReadonlyMap<string, string>;
  selectedNodeId: string | null;
  onSelectNode: (nodeId: string | null) => void;
}) {
  const { run, selectedNodeId } = props;
  const id = useId();
  const [input, setInput] = useState(() => prettyJson(run.input ?? {}));
  const [config, setConfig] = useState(() => prettyJson(run.config ?? {}));
  const [version, setVersion] = useState(() => String(run.version));
  const [problem, setProblem] = useState<string | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const [state, retry] = useMutation(RETRY_RUN);

  const finished = isFinished(run.status);
  const node = selectedNodeId && props.nodeIds.includes(selectedNodeId) ? selectedNodeId : null;
  const loop = selectedNodeId ? props.loopOf?.get(selectedNodeId) : undefined;
  const why = isResumable(run.status)
    ? 'A paused run cannot be retried: resume it, or cancel it and retry it once it has finished.'
    : !finished
      ? 'The run can be retried once it has finished (succeeded, failed or been cancelled).'
      : !node && loop
        ? `${selectedNodeId} is in the body of the loop ${loop}: retry from ${loop}, which runs its body again from the first iteration.`
        : !node
          ? 'Choose the node to retry from, on the graph or in the list.'
          : null;

  const again = node ? iterationsToRetry(run.tasks, node) : [];

  /** Sends the retry: of the whole node, or of its failed iterations only (`onlyIterations`). */
  const send = async (onlyIterations: boolean) => {
    setSent(null);
    if (!node || !finished) return;
    const parsedInput = parseJsonField('Input', input, { object: true });
    if (!parsedInput.ok) return setProblem(parsedInput.error);
    const parsedConfig = parseJsonField('Config', config, { object: true });
    if (!parsedConfig.ok) return setProblem(parsedConfig.error);
    const v = Number(version.trim());
    if (!/^\d+$/.test(version.trim()) || !Number.isSafeInteger(v) || v < 1) return setProblem(`Version must be a whole number from 1, not "${version}".`);
    setProblem(null);
    const result = await retry({
      input: {
        runId: run.id,
        fromNodeId: node,
        input: parsedInput.value,
        config: parsedConfig.value,
        version: v,
        ...(onlyIterations ? { failedIterationsOnly: true } : {}),
      },
    });
    if (result.error) return;
    const where = `${node}${v === run.version ? '' : ` on version ${v}`}`;
    setSent(onlyIterations ? `Retry of ${again.length} failed iteration${again.length === 1 ? '' : 's'} of ${where} started.` : `Retry started from ${where}.`);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void send(false);
  };

  const reset = () => {
    setInput(prettyJson(run.input ?? {}));
    setConfig(prettyJson(run.config ?? {}));
    setVersion(String(run.version));
    setProblem(null);
  };

  return (
    <form className="action-form" aria-labelledby={`${id}-title`} onSubmit={submit} noValidate>
      <h3 id={`${id}-title`}>Retry from {node ? <code>{node}</code> : 'a node'}</h3>
      <p className="hint">The node and everything after it run again; the run keeps its id.</p>
      <label className="field" htmlFor={`${id}-node`}>
        Retry from node
        <select id={`${id}-node`} value={node ?? ''} onChange={(e) => props.onSelectNode(e.target.value || null)}>
          <option value="">Choose a node…</option>
          {props.nodeIds.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
      <label className="field" htmlFor={`${id}-input`}>
        Input (JSON)
        <textarea id={`${id}-input`} value={input} onChange={(e) => setInput(e.target.value)} spellCheck={false} rows={5} />
      </label>
      <label className="field" htmlFor={`${id}-config`}>
        Config (JSON)
        <textarea id={`${id}-config`} value={config} onChange={(e) => setConfig(e.target.value)} spellCheck={false} rows={4} />
      </label>
      <label className="field" htmlFor={`${id}-version`}>
        Version
        <input
          id={`${id}-version`}
          className="version-input"
          type="number"
          min={1}
          step={1}
          inputMode="numeric"
          value={version}
          onChange={(e) => setVersion(e.target.value)}
        />
      </label>
      {why && (
        <p className="hint" id={`${id}-why`}>
          {why}
        </p>
      )}
      <div className="form-buttons">
        <button type="submit" disabled={!!why || state.fetching} aria-describedby={why ? `${id}-why` : undefined}>
          Retry run
        </button>
        {again.length > 0 && (
          <button type="button" disabled={!!why || state.fetching} onClick={() => void send(true)} aria-describedby={`${id}-iterations`}>
            Retry failed iterations
          </button>
        )}
        <button type="button" className="quiet" onClick={reset}>
          Reset to the run's values
        </button>
      </div>
      {again.length > 0 && (
        <p className="hint" id={`${id}-iterations`}>
          Retry failed iterations runs again only iterations {again.slice(0, 10).join(', ')}
          {again.length > 10 ? ` and ${again.length - 10} more` : ''} of <code>{node}</code> (failed, skipped or cancelled), with their first inputs; the
          completed ones keep their outputs.
        </p>
      )}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {!problem && <ErrorText error={state.error} />}
      {sent && !state.error && (
        <p className="success" role="status">
          {sent}
        </p>
      )}
    </form>
  );
}
