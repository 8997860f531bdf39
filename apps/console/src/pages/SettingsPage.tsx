import { useEffect, useId, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { placeProblems, type ApiProblem } from '../api/problems.js';
import { ErrorText } from '../components/ErrorText.js';
import { FieldProblems, FormProblems } from '../components/FieldProblems.js';
import { useSession } from '../session/session.js';
import { TENANT_SETTINGS, UPDATE_TENANT_SETTINGS, type TenantSettings } from './settings/operations.js';
import { isRetentionProblem, retentionInput, retentionText, retentionWords } from './settings/retention.js';
import './admin.css';

/** `/settings`: the tenant's settings for an admin key (run retention); other keys are told why there is nothing to change. */
export function SettingsPage() {
  const { caller, can } = useSession();
  if (!can.administer) {
    return (
      <section>
        <h1>Tenant settings</h1>
        <p>Reading and changing the tenant's settings (how long runs are kept) needs an admin key; this console is signed in with a {caller.role} key.</p>
      </section>
    );
  }
  return <SettingsForm />;
}

function SettingsForm() {
  const id = useId();
  const [{ data, error, fetching }] = useQuery<{ tenantSettings: TenantSettings }>({ query: TENANT_SETTINGS, requestPolicy: 'network-only' });
  const [saved, save] = useMutation<{ updateTenantSettings: TenantSettings }>(UPDATE_TENANT_SETTINGS);
  const [text, setText] = useState('');
  const [local, setLocal] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const current = saved.data?.updateTenantSettings.retentionDays ?? data?.tenantSettings.retentionDays;
  const known = data !== undefined;

  // The field starts from what the API holds.
  useEffect(() => {
    if (data) setText(retentionText(data.tenantSettings.retentionDays));
  }, [data]);

  const placed = saved.error ? placeProblems(saved.error, (p) => (isRetentionProblem(p) ? 'retentionDays' : null)) : null;
  const fieldProblems: ApiProblem[] = [...(local ? [{ message: local }] : []), ...(placed?.fields.retentionDays ?? [])];

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setDone(false);
    const asked = retentionInput(text);
    setLocal(asked.problem);
    if (asked.problem !== null) return;
    const result = await save({ input: { retentionDays: asked.retentionDays } });
    if (result.data) {
      setText(retentionText(result.data.updateTenantSettings.retentionDays));
      setDone(true);
    }
  };

  return (
    <section aria-labelledby={`${id}-title`}>
      <h1 id={`${id}-title`}>Tenant settings</h1>
      {fetching && !known && (
        <p className="loading" role="status">
          Loading settings…
        </p>
      )}
      <ErrorText error={error} />
      {known && (
        <form className="panel settings-form" onSubmit={submit} aria-labelledby={`${id}-retention`}>
          <h2 id={`${id}-retention`}>Run retention</h2>
          <p data-testid="retention-now">{retentionWords(current ?? null)}</p>
          <label className="field" htmlFor={`${id}-days`}>
            Retention days
            <input
              id={`${id}-days`}
              inputMode="numeric"
              value={text}
              onChange={(e) => {
                setText(e.target.value);
                setDone(false);
              }}
              placeholder="empty: keep forever"
              autoComplete="off"
              aria-invalid={fieldProblems.length > 0}
              aria-describedby={`${id}-hint${fieldProblems.length ? ` ${id}-problems` : ''}`}
            />
          </label>
          <FieldProblems id={`${id}-problems`} field="retentionDays" problems={fieldProblems} />
          <p className="hint" id={`${id}-hint`}>
            1 to 3,650 days, or empty to keep runs forever. The scheduler deletes a whole run tree (child runs, tasks, history, logs) that many days after its
            top-level run ended.
          </p>
          <div className="form-buttons">
            <button type="submit" disabled={saved.fetching}>
              Save
            </button>
            {done && (
              <span className="success" role="status">
                Saved.
              </span>
            )}
          </div>
          {placed && <FormProblems summary={placed.summary} rest={placed.rest} />}
        </form>
      )}
    </section>
  );
}
