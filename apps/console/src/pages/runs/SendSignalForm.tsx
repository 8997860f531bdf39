import { useId, useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { parseJsonField } from './json.js';
import { SEND_SIGNAL } from './operations.js';

/**
 * Sends a signal to the run. The name follows the signal a WAITING node awaits (`suggested`)
 * until it is edited; the payload is JSON (empty: {}). The answer says whether a waiting node
 * took it or it was buffered.
 */
export function SendSignalForm(props: { runId: string; suggested: string }) {
  const id = useId();
  const [edited, setEdited] = useState<string | null>(null);
  const [payload, setPayload] = useState('{}');
  const [problem, setProblem] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [state, send] = useMutation<{ sendSignal: { delivered: boolean } }>(SEND_SIGNAL);
  const name = edited ?? props.suggested;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setOutcome(null);
    if (!name.trim()) return setProblem('Enter the name of the signal.');
    const parsed = parseJsonField('Payload', payload, { fallback: {} });
    if (!parsed.ok) return setProblem(parsed.error);
    setProblem(null);
    const result = await send({ input: { runId: props.runId, name: name.trim(), payload: parsed.value } });
    const delivered = result.data?.sendSignal.delivered;
    if (delivered === undefined) return;
    setOutcome(delivered ? 'Signal delivered' : 'Signal buffered (no node is waiting for it yet)');
    setEdited(null); // follow the next awaited signal
  };

  return (
    <form className="action-form" aria-labelledby={`${id}-title`} onSubmit={submit} noValidate>
      <h3 id={`${id}-title`}>Signal</h3>
      <p className="hint">
        {props.suggested ? (
          <>
            A node is waiting for <code>{props.suggested}</code>.
          </>
        ) : (
          'No node is waiting for a signal now: one sent now is kept for the node that waits for it later.'
        )}
      </p>
      <label className="field" htmlFor={`${id}-name`}>
        Signal name
        <input id={`${id}-name`} value={name} onChange={(e) => setEdited(e.target.value)} autoComplete="off" spellCheck={false} />
      </label>
      <label className="field" htmlFor={`${id}-payload`}>
        Payload (JSON)
        <textarea id={`${id}-payload`} value={payload} onChange={(e) => setPayload(e.target.value)} spellCheck={false} rows={3} />
      </label>
      <div className="form-buttons">
        <button type="submit" disabled={state.fetching}>
          Send signal
        </button>
      </div>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {!problem && <ErrorText error={state.error} />}
      {outcome && !problem && !state.error && (
        <p className="success" role="status">
          {outcome}
        </p>
      )}
    </form>
  );
}
