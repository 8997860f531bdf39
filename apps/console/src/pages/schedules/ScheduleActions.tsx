import { useId, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { useMutation } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { InlineConfirm } from '../../components/InlineConfirm.js';
import { localInputToIso } from '../runs/time.js';
import { fireText } from './format.js';
import {
  BACKFILL_SCHEDULE,
  DELETE_SCHEDULE,
  PAUSE_SCHEDULE,
  TRIGGER_SCHEDULE,
  UNPAUSE_SCHEDULE,
  type ScheduleBackfill,
  type ScheduleDetail,
  type ScheduleFire,
} from './operations.js';

/**
 * An operator's actions on a schedule: pause or unpause with a note, trigger now, backfill a
 * range, edit ("Edit schedule", the form is the page's), delete (asks first). Each refusal shows
 * the API's words; `onChanged` reads the schedule again after a change.
 */
export function ScheduleActions(props: { schedule: ScheduleDetail; onChanged: () => void; onEdit: () => void }) {
  const { schedule } = props;
  return (
    <section className="panel schedule-actions" aria-labelledby="schedule-actions-title">
      <h2 id="schedule-actions-title">Actions</h2>
      <PauseForm schedule={schedule} onChanged={props.onChanged} />
      <TriggerForm scheduleId={schedule.id} paused={schedule.paused} onChanged={props.onChanged} />
      <BackfillForm scheduleId={schedule.id} paused={schedule.paused} onChanged={props.onChanged} />
      <div className="action-form">
        <h3>Change</h3>
        <div className="form-buttons">
          <button type="button" className="quiet" onClick={props.onEdit}>
            Edit schedule
          </button>
        </div>
        <DeleteSchedule scheduleId={schedule.id} />
      </div>
    </section>
  );
}

/** Pause (or, when paused, unpause) with an optional note, kept with who did it. */
function PauseForm(props: { schedule: ScheduleDetail; onChanged: () => void }) {
  const id = useId();
  const { paused } = props.schedule;
  const [note, setNote] = useState('');
  const [pauseState, pause] = useMutation(PAUSE_SCHEDULE);
  const [unpauseState, unpause] = useMutation(UNPAUSE_SCHEDULE);
  const state = paused ? unpauseState : pauseState;
  const [done, setDone] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setDone(null);
    const trimmed = note.trim();
    const variables = { id: props.schedule.id, note: trimmed || null };
    const result = paused ? await unpause(variables) : await pause(variables);
    if (result.error) return;
    setNote('');
    setDone(paused ? 'Unpaused: the next fire time is computed from now.' : 'Paused: nothing fires by the clock until it is unpaused.');
    props.onChanged();
  };

  return (
    <form className="action-form" aria-labelledby={`${id}-title`} onSubmit={submit}>
      <h3 id={`${id}-title`}>{paused ? 'Unpause' : 'Pause'}</h3>
      <p className="hint">{paused ? 'Fire times missed while paused do not fire.' : 'Stops the clock, the buffer and backfills; “Trigger now” still fires.'}</p>
      <label className="field" htmlFor={`${id}-note`}>
        {paused ? 'Unpause note (optional)' : 'Pause note (optional)'}
        <input
          id={`${id}-note`}
          value={note}
          onChange={(e) => setNote(e.target.value)}
          maxLength={2000}
          placeholder={paused ? 'e.g. upstream fixed' : 'e.g. upstream maintenance'}
        />
      </label>
      <div className="form-buttons">
        <button type="submit" className={paused ? undefined : 'danger'} disabled={state.fetching}>
          {paused ? 'Unpause schedule' : 'Pause schedule'}
        </button>
      </div>
      <ErrorText error={state.error} />
      {done && !state.error && (
        <p className="success" role="status">
          {done}
        </p>
      )}
    </form>
  );
}

/** Fires the schedule now, and says what came of it: the run started (linked) or why none did. */
function TriggerForm(props: { scheduleId: string; paused: boolean; onChanged: () => void }) {
  const id = useId();
  const [state, trigger] = useMutation<{ triggerSchedule: ScheduleFire }>(TRIGGER_SCHEDULE);
  const [fire, setFire] = useState<ScheduleFire | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setFire(null);
    const result = await trigger({ id: props.scheduleId });
    if (!result.data?.triggerSchedule) return;
    setFire(result.data.triggerSchedule);
    props.onChanged();
  };

  return (
    <form className="action-form" aria-labelledby={`${id}-title`} onSubmit={submit}>
      <h3 id={`${id}-title`}>Trigger</h3>
      <p className="hint">Fires now (nominal time: now) under the overlap policy{props.paused ? ', even while paused' : ''}; the clock is not moved.</p>
      <div className="form-buttons">
        <button type="submit" disabled={state.fetching}>
          Trigger now
        </button>
      </div>
      <ErrorText error={state.error} />
      {fire && !state.error && (
        <p className={fire.outcome === 'SKIPPED' ? 'warn-text' : 'success'} role="status" data-outcome={fire.outcome}>
          {fireText(fire)}
          {fire.run && (
            <>
              {' '}
              {fire.outcome === 'STARTED' ? 'Run' : 'Existing run'}:{' '}
              <Link className="mono" to={`/runs/${fire.run.id}`}>
                {fire.run.id}
              </Link>
            </>
          )}
        </p>
      )}
    </form>
  );
}

/** Backfills the nominal times of a range (local date and time, sent as ISO); its progress shows under Backfills. */
function BackfillForm(props: { scheduleId: string; paused: boolean; onChanged: () => void }) {
  const id = useId();
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [state, backfill] = useMutation<{ backfillSchedule: ScheduleBackfill }>(BACKFILL_SCHEDULE);
  const [started, setStarted] = useState<ScheduleBackfill | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setStarted(null);
    const fromIso = localInputToIso(from);
    const toIso = localInputToIso(to);
    if (!fromIso) return setProblem(from ? `From is not a date and time: "${from}".` : 'Enter the start of the range (From).');
    if (!toIso) return setProblem(to ? `To is not a date and time: "${to}".` : 'Enter the end of the range (To).');
    setProblem(null);
    const result = await backfill({ id: props.scheduleId, from: fromIso, to: toIso });
    if (!result.data?.backfillSchedule) return;
    setStarted(result.data.backfillSchedule);
    props.onChanged();
  };

  return (
    <form className="action-form" aria-labelledby={`${id}-title`} onSubmit={submit} noValidate>
      <h3 id={`${id}-title`}>Backfill</h3>
      <p className="hint">
        Fires each nominal time in the range (both ends included), oldest first, under the overlap policy
        {props.paused ? '; it waits while the schedule is paused' : ''}.
      </p>
      <div className="range">
        <label className="field" htmlFor={`${id}-from`}>
          From
          <input id={`${id}-from`} type="datetime-local" step={1} value={from} onChange={(e) => setFrom(e.target.value)} />
        </label>
        <label className="field" htmlFor={`${id}-to`}>
          To
          <input id={`${id}-to`} type="datetime-local" step={1} value={to} onChange={(e) => setTo(e.target.value)} />
        </label>
      </div>
      <div className="form-buttons">
        <button type="submit" disabled={state.fetching}>
          Start backfill
        </button>
      </div>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {!problem && <ErrorText error={state.error} />}
      {started && !problem && !state.error && (
        <p className="success" role="status">
          Backfill started: {started.total} nominal time{started.total === 1 ? '' : 's'} to fire. Its progress is under Backfills.
        </p>
      )}
    </form>
  );
}

/** "Delete schedule", then "Confirm delete" / "Cancel"; the list is shown after. */
function DeleteSchedule(props: { scheduleId: string }) {
  const [confirming, setConfirming] = useState(false);
  const [state, remove] = useMutation(DELETE_SCHEDULE);
  const navigate = useNavigate();

  const confirm = async () => {
    const result = await remove({ id: props.scheduleId });
    if (result.error) return setConfirming(false);
    navigate('/schedules', { state: { deleted: props.scheduleId } });
  };

  return (
    <>
      {!confirming ? (
        <div className="form-buttons">
          <button type="button" className="quiet" onClick={() => setConfirming(true)}>
            Delete schedule
          </button>
        </div>
      ) : (
        <InlineConfirm label="Delete this schedule?" action="Confirm delete" busy={state.fetching} onConfirm={confirm} onCancel={() => setConfirming(false)}>
          Delete this schedule and its backfills? Its runs stay (and keep their schedule id).
        </InlineConfirm>
      )}
      <ErrorText error={state.error} />
    </>
  );
}
