import { useState } from 'react';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { useSession } from '../session/session.js';
import { CreateKeyForm } from './keys/CreateKeyForm.js';
import { KeysTable } from './keys/KeysTable.js';
import { SecretPanel } from './keys/SecretPanel.js';
import { API_KEYS, type ApiKeyRow, type CreatedKey } from './keys/operations.js';
import './admin.css';

/** `/keys`: the tenant's API keys, for an admin key; create one (its secret shown once) or revoke one. */
export function KeysPage() {
  const { caller, can } = useSession();
  if (!can.administer) {
    return (
      <section>
        <h1>API keys</h1>
        <p>
          Listing, creating and revoking API keys needs an admin key; this console is signed in with a {caller.role} key. Sign in with an admin key to manage
          keys.
        </p>
      </section>
    );
  }
  return <KeysAdmin ownKeyId={caller.keyId} />;
}

function KeysAdmin(props: { ownKeyId: string }) {
  const [{ data, error, fetching }, reexecute] = useQuery<{ apiKeys: ApiKeyRow[] }>({ query: API_KEYS });
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const refresh = () => reexecute({ requestPolicy: 'network-only' });

  return (
    <section>
      <h1>API keys</h1>
      {created && <SecretPanel created={created} onDone={() => setCreated(null)} />}
      <CreateKeyForm
        blocked={created !== null}
        onCreated={(key) => {
          setCreated(key);
          refresh();
        }}
      />
      <h2>Keys of this tenant</h2>
      {fetching && !data && (
        <p className="loading" role="status">
          Loading keys…
        </p>
      )}
      <ErrorText error={error} />
      {data && <KeysTable keys={data.apiKeys} ownKeyId={props.ownKeyId} onRevoked={refresh} />}
    </section>
  );
}
