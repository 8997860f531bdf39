import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import type { Role } from '../../session/session.js';
import { CREATE_API_KEY, type CreatedKey } from './operations.js';

const ROLES: { role: Role; says: string }[] = [
  { role: 'viewer', says: 'viewer (read only)' },
  { role: 'operator', says: 'operator (runs)' },
  { role: 'admin', says: 'admin (everything)' },
];

/**
 * Name and role of a new key, and the "Create key" button; hands the created key (with its secret) up.
 * `blocked` while a created key's secret is still on show: a second key would replace that panel
 * and its secret, which is never shown again, so the button stays disabled until Done.
 */
export function CreateKeyForm(props: { onCreated: (key: CreatedKey) => void; blocked?: boolean }) {
  const blocked = props.blocked ?? false;
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [state, create] = useMutation<{ createApiKey: CreatedKey }>(CREATE_API_KEY);

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    if (blocked) return;
    const result = await create({ input: { name, role } });
    if (result.data?.createApiKey) {
      setName('');
      props.onCreated(result.data.createApiKey);
    }
  };

  return (
    <form className="panel create-key" onSubmit={onSubmit} aria-labelledby="create-key-title">
      <h2 id="create-key-title">New key</h2>
      <div className="toolbar">
        <label className="field">
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} required placeholder="e.g. ci-deploy" autoComplete="off" />
        </label>
        <label className="field">
          Role
          <select value={role} onChange={(e) => setRole(e.target.value as Role)} aria-describedby="role-hint">
            {ROLES.map((r) => (
              <option key={r.role} value={r.role}>
                {r.says}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={state.fetching || blocked} aria-describedby={blocked ? 'create-key-blocked' : undefined}>
          Create key
        </button>
      </div>
      {blocked && (
        <p className="hint" id="create-key-blocked">
          Copy the key shown, then press Done
        </p>
      )}
      <p className="hint" id="role-hint">
        viewer: read only. operator: also start, signal, cancel and retry runs. admin: also publish workflows, manage versions and keys.
      </p>
      <ErrorText error={state.error} />
    </form>
  );
}
