import { useId, useMemo, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { EMPTY_DRAFT, OVERLAP_MEANS, draftOf, timeZones, toScheduleInput, type ScheduleDraft } from './format.js';
import {
  CREATE_SCHEDULE,
  OVERLAP_POLICIES,
  UPDATE_SCHEDULE,
  WORKFLOW_IDS,
  type OverlapPolicy,
  type ScheduleDetail,
  type WorkflowChoice,
} from './operations.js';

/**
 * A schedule's fields: a new one ("Create schedule") or `schedule` edited ("Save changes").
 * What the form can tell by itself (a number that is not one, JSON that does not parse) it says
 * naming the field; everything else is the API's to refuse, in its own words.
 */
export function ScheduleForm(props: { schedule?: ScheduleDetail; onDone: (schedule: ScheduleDetail) => void; onCancel: () => void }) {
  const editing = props.schedule;
  const id = useId();
  const [draft, setDraft] = useState<ScheduleDraft>(() => (editing ? draftOf(editing) : EMPTY_DRAFT));
  const [problem, setProblem] = useState<string | null>(null);
  const [paused, setPaused] = useState(false);
  const [{ data: workflowsData, error: workflowsError }] = useQuery<{ workflows: WorkflowChoice[] }>({ query: WORKFLOW_IDS });
  const [created, create] = useMutation<{ createSchedule: ScheduleDetail }>(CREATE_SCHEDULE);
  const [updated, update] = useMutation<{ updateSchedule: ScheduleDetail }>(UPDATE_SCHEDULE);
  const state = editing ? updated : created;
  const zones = useMemo(() => timeZones(), []);

  const workflows = workflowsData?.workflows ?? [];
  const chosen = workflows.find((w) => w.id === draft.workflowId);
  const set = (key: keyof ScheduleDraft) => (event: { target: { value: string } }) => setDraft((d) => ({ ...d, [key]: event.target.value }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const parsed = toScheduleInput(draft, Boolean(editing));
    if (!parsed.ok) return setProblem(parsed.error);
    setProblem(null);
    if (editing) {
      const result = await update({ input: { ...parsed.input, id: editing.id } });
      if (result.data?.updateSchedule) props.onDone(result.data.updateSchedule);
    } else {
      const result = await create({ input: { ...parsed.input, ...(paused ? { paused: true } : {}) } });
      if (result.data?.createSchedule) props.onDone(result.data.createSchedule);
    }
  };

  return (
    <form className="panel schedule-form" aria-labelledby={`${id}-title`} onSubmit={submit} noValidate>
      <h2 id={`${id}-title`}>{editing ? 'Edit schedule' : 'New schedule'}</h2>
      <div className="form-grid">
        <div className="field">
          <label htmlFor={`${id}-workflow`}>Workflow</label>
          <select id={`${id}-workflow`} value={draft.workflowId} onChange={set('workflowId')} required>
            <option value="">{workflowsData ? 'Choose a workflow' : 'Loading workflows…'}</option>
            {editing && !chosen && draft.workflowId && <option value={draft.workflowId}>{draft.workflowId}</option>}
            {workflows.map((w) => (
              <option key={w.id} value={w.id}>
                {w.id}
                {w.name ? ` (${w.name})` : ''}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-version`}>Version (optional)</label>
          <input
            id={`${id}-version`}
            type="number"
            min={1}
            step={1}
            inputMode="numeric"
            value={draft.version}
            onChange={set('version')}
            placeholder={chosen ? `default (now v${chosen.defaultVersion})` : 'default'}
            aria-describedby={`${id}-version-hint`}
          />
          <span className="hint" id={`${id}-version-hint`}>
            Empty: the workflow’s default version at each fire.
          </span>
        </div>
        <fieldset className="field timing">
          <legend>Timing</legend>
          <span className="radios">
            <label>
              <input
                type="radio"
                name={`${id}-timing`}
                value="cron"
                checked={draft.timing === 'cron'}
                onChange={() => setDraft((d) => ({ ...d, timing: 'cron' }))}
              />
              By cron expression
            </label>
            <label>
              <input
                type="radio"
                name={`${id}-timing`}
                value="interval"
                checked={draft.timing === 'interval'}
                onChange={() => setDraft((d) => ({ ...d, timing: 'interval' }))}
              />
              Every N seconds
            </label>
          </span>
          {draft.timing === 'cron' ? (
            <div className="field">
              <label htmlFor={`${id}-cron`}>Cron expression</label>
              <input
                id={`${id}-cron`}
                className="mono"
                value={draft.cron}
                onChange={set('cron')}
                placeholder="0 9 * * 1-5"
                autoComplete="off"
                spellCheck={false}
                aria-describedby={`${id}-cron-hint`}
              />
              <span className="hint" id={`${id}-cron-hint`}>
                5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, or @hourly, @daily, @weekly, @monthly, @yearly.
              </span>
            </div>
          ) : (
            <div className="field">
              <label htmlFor={`${id}-interval`}>Interval (seconds)</label>
              <input
                id={`${id}-interval`}
                type="number"
                min={1}
                step={1}
                inputMode="numeric"
                value={draft.intervalSeconds}
                onChange={set('intervalSeconds')}
                aria-describedby={`${id}-interval-hint`}
              />
              <span className="hint" id={`${id}-interval-hint`}>
                Counted from the start, else from the schedule’s creation.
              </span>
            </div>
          )}
        </fieldset>
        <div className="field">
          <label htmlFor={`${id}-zone`}>Time zone</label>
          <input
            id={`${id}-zone`}
            list={`${id}-zones`}
            value={draft.timeZone}
            onChange={set('timeZone')}
            placeholder="UTC"
            autoComplete="off"
            spellCheck={false}
            aria-describedby={`${id}-zone-hint`}
          />
          <datalist id={`${id}-zones`}>
            {zones.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
          <span className="hint" id={`${id}-zone-hint`}>
            IANA zone the cron expression is read in, e.g. America/New_York.
          </span>
        </div>
        <div className="field">
          <label htmlFor={`${id}-overlap`}>Overlap policy</label>
          <select
            id={`${id}-overlap`}
            value={draft.overlapPolicy}
            onChange={(e) => setDraft((d) => ({ ...d, overlapPolicy: e.target.value as OverlapPolicy }))}
            aria-describedby={`${id}-overlap-hint`}
          >
            {OVERLAP_POLICIES.map((p) => (
              <option key={p} value={p}>
                {p}: {OVERLAP_MEANS[p]}
              </option>
            ))}
          </select>
          <span className="hint" id={`${id}-overlap-hint`}>
            What a fire does while the previous run is still RUNNING.
          </span>
        </div>
        <div className="field">
          <label htmlFor={`${id}-catchup`}>Catch-up seconds</label>
          <input
            id={`${id}-catchup`}
            type="number"
            min={0}
            step={1}
            inputMode="numeric"
            value={draft.catchUpSeconds}
            onChange={set('catchUpSeconds')}
            aria-describedby={`${id}-catchup-hint`}
          />
          <span className="hint" id={`${id}-catchup-hint`}>
            Fires missed by at most this long still fire; older ones are skipped as missed.
          </span>
        </div>
        <div className="field">
          <label htmlFor={`${id}-jitter`}>Jitter seconds</label>
          <input
            id={`${id}-jitter`}
            type="number"
            min={0}
            step={1}
            inputMode="numeric"
            value={draft.jitterSeconds}
            onChange={set('jitterSeconds')}
            aria-describedby={`${id}-jitter-hint`}
          />
          <span className="hint" id={`${id}-jitter-hint`}>
            Each fire is delayed by up to this long.
          </span>
        </div>
        <div className="field">
          <label htmlFor={`${id}-start`}>Start (optional)</label>
          <input id={`${id}-start`} type="datetime-local" step={1} value={draft.startAt} onChange={set('startAt')} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-end`}>End (optional)</label>
          <input id={`${id}-end`} type="datetime-local" step={1} value={draft.endAt} onChange={set('endAt')} />
        </div>
        <div className="field wide">
          <label htmlFor={`${id}-input`}>Input (JSON)</label>
          <textarea id={`${id}-input`} value={draft.input} onChange={set('input')} spellCheck={false} rows={3} aria-describedby={`${id}-input-hint`} />
          <span className="hint" id={`${id}-input-hint`}>
            A JSON object; each run also gets <code>input.schedule</code> = {'{id, nominalTime}'}.
          </span>
        </div>
        <div className="field wide">
          <label htmlFor={`${id}-config`}>Config (JSON)</label>
          <textarea id={`${id}-config`} value={draft.config} onChange={set('config')} spellCheck={false} rows={3} />
        </div>
        <div className="field wide">
          <label htmlFor={`${id}-note`}>Note (optional)</label>
          <input id={`${id}-note`} value={draft.note} onChange={set('note')} maxLength={2000} placeholder="e.g. nightly export for finance" />
        </div>
        {!editing && (
          <label className="check">
            <input type="checkbox" checked={paused} onChange={(e) => setPaused(e.target.checked)} /> Create paused
          </label>
        )}
      </div>
      <div className="form-buttons">
        <button type="submit" disabled={state.fetching}>
          {editing ? 'Save changes' : 'Create schedule'}
        </button>
        <button type="button" className="quiet" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
      {problem && (
        <p className="error form-problem" role="alert">
          {problem}
        </p>
      )}
      {!problem && <ErrorText error={state.error} />}
      <ErrorText error={workflowsError} />
    </form>
  );
}
