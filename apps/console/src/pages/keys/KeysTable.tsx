import { useState } from 'react';
import { useMutation } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { InlineConfirm } from '../../components/InlineConfirm.js';
import { TimeCell } from '../runs/RunsTable.js';
import { REVOKE_API_KEY, type ApiKeyRow } from './operations.js';

/**
 * The tenant's keys, oldest first, revoked ones included. "Revoke" asks first ("Confirm revoke" /
 * "Cancel"); a refusal (the last admin key is CONFLICT) shows the API's words.
 */
export function KeysTable(props: { keys: ApiKeyRow[]; ownKeyId: string; onRevoked: () => void }) {
  const [confirming, setConfirming] = useState<string | null>(null);
  const [state, revoke] = useMutation(REVOKE_API_KEY);
  const [failed, setFailed] = useState<typeof state.error>(undefined);

  const confirm = async (id: string) => {
    setFailed(undefined);
    const result = await revoke({ id });
    setConfirming(null);
    if (result.error) setFailed(result.error);
    else props.onRevoked();
  };

  return (
    <>
      <ErrorText error={failed} />
      <div className="table-wrap">
        <table className="keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col">Revoked</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {props.keys.map((k) => {
              const own = k.id === props.ownKeyId;
              return (
                <tr key={k.id} className={k.revokedAt ? 'revoked-row' : undefined}>
                  <td>
                    {k.name}
                    {own && <span className="mark mark-own">this console’s key</span>}
                  </td>
                  <td>
                    <code>{k.keyPrefix}…</code>
                  </td>
                  <td>
                    <span className={`role role-${k.role}`}>{k.role}</span>
                  </td>
                  <td>
                    <TimeCell at={k.createdAt} />
                  </td>
                  <td>{k.revokedAt ? <TimeCell at={k.revokedAt} /> : <span className="muted">active</span>}</td>
                  <td className="key-actions">
                    {!k.revokedAt && confirming !== k.id && (
                      <button type="button" className="quiet" onClick={() => (setFailed(undefined), setConfirming(k.id))}>
                        Revoke
                      </button>
                    )}
                    {!k.revokedAt && confirming === k.id && (
                      <InlineConfirm
                        label={`Revoke ${k.name}?`}
                        action="Confirm revoke"
                        busy={state.fetching}
                        onConfirm={() => confirm(k.id)}
                        onCancel={() => setConfirming(null)}
                      >
                        Revoke “{k.name}”? Clients using it are refused at once{own ? ', and this console signs out' : ''}.
                      </InlineConfirm>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}
