import { useState } from 'react';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { useSession } from '../session/session.js';
import { CreateWebhookForm } from './webhooks/CreateWebhookForm.js';
import { DeliveriesTable } from './webhooks/DeliveriesTable.js';
import { WebhookSecretPanel } from './webhooks/WebhookSecretPanel.js';
import { WebhooksTable } from './webhooks/WebhooksTable.js';
import { WEBHOOKS, type CreatedWebhook, type WebhookRow } from './webhooks/operations.js';
import './admin.css';

/** `/webhooks`: the tenant's webhooks, for an admin key; create one (its secret shown once), delete one, read one's deliveries. */
export function WebhooksPage() {
  const { caller, can } = useSession();
  if (!can.administer) {
    return (
      <section>
        <h1>Webhooks</h1>
        <p>Managing webhooks needs an admin key; this console is signed in with a {caller.role} key.</p>
      </section>
    );
  }
  return <WebhooksAdmin />;
}

function WebhooksAdmin() {
  const [{ data, error, fetching }, reexecute] = useQuery<{ webhooks: WebhookRow[] }>({ query: WEBHOOKS });
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  const refresh = () => reexecute({ requestPolicy: 'network-only' });
  const shownHook = data?.webhooks.find((w) => w.id === shown);

  return (
    <section>
      <h1>Webhooks</h1>
      {created && <WebhookSecretPanel created={created} onDone={() => setCreated(null)} />}
      <CreateWebhookForm
        blocked={created !== null}
        onCreated={(hook) => {
          setCreated(hook);
          refresh();
        }}
      />
      <h2>Webhooks of this tenant</h2>
      {fetching && !data && (
        <p className="loading" role="status">
          Loading webhooks…
        </p>
      )}
      <ErrorText error={error} />
      {data && <WebhooksTable hooks={data.webhooks} shown={shown} onShow={setShown} onDeleted={refresh} />}
      {shownHook && <DeliveriesTable key={shownHook.id} webhookId={shownHook.id} url={shownHook.url} />}
    </section>
  );
}
