import { useEffect, useId, useState, type FormEvent } from 'react';
import { NO_FILTERS, hasFilters, type RunFilterParams } from './filters.js';
import { isoToLocalInput, localInputToIso } from './time.js';
import { RUN_STATUSES } from './types.js';

/** The form's own values: the dates as `datetime-local` values (local time). */
type Draft = RunFilterParams;

const DATES = ['createdAfter', 'createdBefore', 'finishedAfter', 'finishedBefore'] as const;

function draftOf(filters: RunFilterParams): Draft {
  const draft = { ...filters };
  for (const key of DATES) draft[key] = isoToLocalInput(filters[key]);
  return draft;
}

/** The filters for the API from the form: '' for an empty or unreadable date (the input itself refuses those). */
function filtersOf(draft: Draft): RunFilterParams {
  return {
    status: draft.status,
    workflowId: draft.workflowId.trim(),
    version: draft.version.trim(),
    createdAfter: localInputToIso(draft.createdAfter) ?? '',
    createdBefore: localInputToIso(draft.createdBefore) ?? '',
    schedule: draft.schedule.trim(),
    failedNodeId: draft.failedNodeId.trim(),
    errorContains: draft.errorContains.trim(),
    finishedAfter: localInputToIso(draft.finishedAfter) ?? '',
    finishedBefore: localInputToIso(draft.finishedBefore) ?? '',
    labels: draft.labels,
  };
}

/**
 * The runs list's filters. The status applies as soon as it is chosen, the other fields on
 * "Apply" (or Enter; in the labels box, Ctrl+Enter); "Clear" drops them all. The form follows the URL (back and forward).
 */
export function RunFilters(props: { filters: RunFilterParams; onApply: (filters: RunFilterParams) => void }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(props.filters));
  const id = useId();
  const { filters } = props;

  // Follow the URL, by value: a new object with the same filters must not wipe what is being typed.
  const shown = JSON.stringify(filters);
  useEffect(() => setDraft(draftOf(JSON.parse(shown) as RunFilterParams)), [shown]);

  const set = (key: keyof Draft) => (event: { target: { value: string } }) => setDraft((d) => ({ ...d, [key]: event.target.value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onApply(filtersOf(draft));
  };

  return (
    <form className="toolbar run-filters" role="search" aria-label="Filter runs" onSubmit={submit}>
      <label htmlFor={`${id}-status`}>
        Status
        <select
          id={`${id}-status`}
          value={draft.status}
          onChange={(e) => {
            const next = { ...draft, status: e.target.value };
            setDraft(next);
            props.onApply(filtersOf(next));
          }}
        >
          <option value="">Any status</option>
          {RUN_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label htmlFor={`${id}-workflow`}>
        Workflow id
        <input id={`${id}-workflow`} value={draft.workflowId} onChange={set('workflowId')} placeholder="any" autoComplete="off" spellCheck={false} />
      </label>
      <label htmlFor={`${id}-version`}>
        Version
        <input
          id={`${id}-version`}
          className="run-filters-version"
          type="number"
          min={1}
          step={1}
          inputMode="numeric"
          value={draft.version}
          onChange={set('version')}
          placeholder="any"
        />
      </label>
      <label htmlFor={`${id}-schedule`}>
        Schedule id
        <input
          id={`${id}-schedule`}
          className="mono"
          value={draft.schedule}
          onChange={set('schedule')}
          placeholder="any"
          autoComplete="off"
          spellCheck={false}
        />
      </label>
      <label htmlFor={`${id}-after`}>
        Created after
        <input id={`${id}-after`} type="datetime-local" value={draft.createdAfter} onChange={set('createdAfter')} />
      </label>
      <label htmlFor={`${id}-before`}>
        Created before
        <input id={`${id}-before`} type="datetime-local" value={draft.createdBefore} onChange={set('createdBefore')} />
      </label>
      <label htmlFor={`${id}-finished-after`}>
        Finished after
        <input id={`${id}-finished-after`} type="datetime-local" value={draft.finishedAfter} onChange={set('finishedAfter')} />
      </label>
      <label htmlFor={`${id}-finished-before`}>
        Finished before
        <input id={`${id}-finished-before`} type="datetime-local" value={draft.finishedBefore} onChange={set('finishedBefore')} />
      </label>
      <label htmlFor={`${id}-failed-node`}>
        Failed node
        <input
          id={`${id}-failed-node`}
          className="mono"
          value={draft.failedNodeId}
          onChange={set('failedNodeId')}
          placeholder="any"
          autoComplete="off"
          spellCheck={false}
        />
      </label>
      <label htmlFor={`${id}-error`}>
        Error contains
        <input id={`${id}-error`} value={draft.errorContains} onChange={set('errorContains')} placeholder="any" autoComplete="off" spellCheck={false} />
      </label>
      <label htmlFor={`${id}-labels`}>
        {/* Named by this span alone: a label around a textarea would add the text typed to its name. */}
        <span id={`${id}-labels-name`}>Labels</span>
        <textarea
          aria-labelledby={`${id}-labels-name`}
          id={`${id}-labels`}
          className="mono run-filters-labels"
          rows={2}
          value={draft.labels}
          onChange={set('labels')}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              props.onApply(filtersOf(draft));
            }
          }}
          placeholder="key=value, one a line"
          aria-describedby={`${id}-labels-hint`}
          autoComplete="off"
          spellCheck={false}
        />
      </label>
      <span id={`${id}-labels-hint`} className="visually-hidden">
        Runs carrying every label given, one key=value a line.
      </span>
      <div className="run-filters-buttons">
        <button type="submit">Apply</button>
        <button type="button" className="quiet" disabled={!hasFilters(filters) && !hasFilters(filtersOf(draft))} onClick={() => props.onApply(NO_FILTERS)}>
          Clear
        </button>
      </div>
    </form>
  );
}
