import { useId, useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { isResumable } from './model.js';
import { PAUSE_RUN, RESUME_RUN } from './operations.js';

/** The API's bound on a pause or resume reason, in characters. */
const REASON_MAX = 2000;

/**
 * Pauses an active run, or resumes a PAUSED one, with an optional reason (a pause's is kept as the
 * run's pauseReason; both go into its history). One form for both, so that a refusal stays shown
 * when the run's state moves under it (the page follows the run live).
 */
export function PauseRunForm(props: { runId: string; status: string }) {
  const id = useId();
  const [reason, setReason] = useState('');
  const [pauseState, pause] = useMutation(PAUSE_RUN);
  const [resumeState, resume] = useMutation(RESUME_RUN);
  const [last, setLast] = useState<'pause' | 'resume' | null>(null);
  const paused = isResumable(props.status);
  const fetching = pauseState.fetching || resumeState.fetching;
  const error = last === 'pause' ? pauseState.error : last === 'resume' ? resumeState.error : undefined;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const trimmed = reason.trim();
    const input = { runId: props.runId, ...(trimmed ? { reason: trimmed } : {}) };
    setLast(paused ? 'resume' : 'pause');
    const result = paused ? await resume({ input }) : await pause({ input });
    if (!result.error) setReason('');
  };

  return (
    <form className="action-form" aria-labelledby={`${id}-title`} onSubmit={submit}>
      <h3 id={`${id}-title`}>{paused ? 'Resume' : 'Pause'}</h3>
      <p className="hint">
        {paused
          ? 'Dispatches what waited while the run was paused; a node that ran out of attempts gets them again.'
          : 'Holds the run: attempts already running finish, signals and timers still arrive, nothing new is dispatched until it is resumed.'}
      </p>
      <label className="field" htmlFor={`${id}-reason`}>
        {paused ? 'Resume reason (optional)' : 'Pause reason (optional)'}
        <input
          id={`${id}-reason`}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          maxLength={REASON_MAX}
          placeholder={paused ? 'e.g. fix deployed' : 'e.g. maintenance window'}
        />
      </label>
      <div className="form-buttons">
        <button type="submit" disabled={fetching}>
          {paused ? 'Resume run' : 'Pause run'}
        </button>
      </div>
      <ErrorText error={error} />
    </form>
  );
}
