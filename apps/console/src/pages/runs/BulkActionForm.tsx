import { useId, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import {
  actionVerb,
  BATCH_ACTIONS,
  BATCH_REASON_MAX,
  batchInput,
  countRefusal,
  newIdempotencyKey,
  runsWord,
  type BatchAction,
  type BatchDraft,
} from '../batches/batch.js';
import { COUNT_RUNS, CREATE_RUN_BATCH, type CreatedRunBatch } from '../batches/operations.js';
import type { RunFilterInput } from './filters.js';

/**
 * The bulk action over the runs list's filter: how many runs it matches now (countRuns with the
 * same filter), the action with its reason or node, and the confirmation, which creates the
 * batch (createRunBatch) and opens its page. The runs are fixed when the batch is created, so
 * the count shown may differ from the batch's total by what changed in between.
 */
export function BulkActionForm(props: { filter: RunFilterInput; onClose: () => void }) {
  const id = useId();
  const navigate = useNavigate();
  const [draft, setDraft] = useState<BatchDraft>({ action: 'PAUSE', reason: '', fromNodeId: '' });
  const [problem, setProblem] = useState<string | null>(null);
  // One key per form: a confirmation sent twice makes one batch.
  const [idempotencyKey] = useState(newIdempotencyKey);
  const [count] = useQuery<{ countRuns: number }>({ query: COUNT_RUNS, variables: { filter: props.filter }, requestPolicy: 'network-only' });
  const [created, create] = useMutation<{ createRunBatch: CreatedRunBatch }>(CREATE_RUN_BATCH);

  const matched = count.data?.countRuns;
  const refusal = matched === undefined ? null : countRefusal(matched);
  const verb = actionVerb(draft.action);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const asked = batchInput(draft, props.filter, idempotencyKey);
    setProblem(asked.problem);
    if (!asked.input) return;
    const result = await create({ input: asked.input });
    if (result.data?.createRunBatch) navigate(`/runs/batches/${result.data.createRunBatch.id}`);
  };

  return (
    <form className="panel bulk-action" aria-labelledby={`${id}-title`} onSubmit={submit}>
      <h2 id={`${id}-title`}>Bulk action</h2>
      {count.fetching && matched === undefined && (
        <p className="loading" role="status">
          Counting the runs this filter matches…
        </p>
      )}
      <ErrorText error={count.error} />
      {matched !== undefined && (
        <p data-testid="bulk-count" data-count={matched} role="status">
          <strong>{runsWord(matched)}</strong> {matched === 1 ? 'matches' : 'match'} the filter now.
        </p>
      )}
      {refusal && <p className="error">{refusal}</p>}
      <div className="toolbar">
        <label className="field" htmlFor={`${id}-action`}>
          Action
          <select id={`${id}-action`} value={draft.action} onChange={(e) => setDraft({ ...draft, action: e.target.value as BatchAction })}>
            {BATCH_ACTIONS.map((a) => (
              <option key={a.action} value={a.action}>
                {a.verb}
              </option>
            ))}
          </select>
        </label>
        {draft.action === 'RETRY' ? (
          <label className="field" htmlFor={`${id}-node`}>
            Retry from node
            <input
              id={`${id}-node`}
              className="mono"
              value={draft.fromNodeId}
              onChange={(e) => setDraft({ ...draft, fromNodeId: e.target.value })}
              required
              autoComplete="off"
              spellCheck={false}
            />
          </label>
        ) : (
          <label className="field" htmlFor={`${id}-reason`}>
            Reason (optional)
            <input
              id={`${id}-reason`}
              value={draft.reason}
              onChange={(e) => setDraft({ ...draft, reason: e.target.value })}
              maxLength={BATCH_REASON_MAX}
              placeholder="e.g. maintenance window"
            />
          </label>
        )}
      </div>
      <p className="hint">
        {verb}: {BATCH_ACTIONS.find((a) => a.action === draft.action)?.says}. The runs matched when you confirm are acted on, at most 100 a second; a run the
        action does not apply to is skipped, with why.
      </p>
      <div className="form-buttons">
        <button type="submit" disabled={matched === undefined || refusal !== null || created.fetching}>
          {matched === undefined ? verb : `${verb} ${runsWord(matched)}`}
        </button>
        <button type="button" className="quiet" onClick={props.onClose}>
          Close
        </button>
      </div>
      <ErrorText error={problem} />
      <ErrorText error={created.error} />
    </form>
  );
}
