import { useId, useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { CANCEL_RUN } from './operations.js';

/** Cancels a PENDING, RUNNING or PAUSED run, with an optional reason (kept as the run's error). */
export function CancelRunForm(props: { runId: string }) {
  const id = useId();
  const [reason, setReason] = useState('');
  const [state, cancel] = useMutation(CANCEL_RUN);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = reason.trim();
    void cancel({ input: { runId: props.runId, ...(trimmed ? { reason: trimmed } : {}) } });
  };
  return (
    <form className="action-form" aria-labelledby={`${id}-title`} onSubmit={submit}>
      <h3 id={`${id}-title`}>Cancel</h3>
      <p className="hint">Stops the run: its running tasks are cancelled and nothing new starts.</p>
      <label className="field" htmlFor={`${id}-reason`}>
        Reason (optional)
        <input id={`${id}-reason`} value={reason} onChange={(e) => setReason(e.target.value)} maxLength={500} placeholder="e.g. duplicate order" />
      </label>
      <div className="form-buttons">
        <button type="submit" className="danger" disabled={state.fetching}>
          Cancel run
        </button>
      </div>
      <ErrorText error={state.error} />
    </form>
  );
}
