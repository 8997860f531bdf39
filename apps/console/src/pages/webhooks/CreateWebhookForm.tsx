import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import type { WebhookEvent } from '../../api/generated/graphql.js';
import { CREATE_WEBHOOK, EVENTS, type CreatedWebhook } from './operations.js';

/**
 * URL and events of a new webhook, and the "Create webhook" button; hands the created webhook (with
 * its secret) up. `blocked` while a secret is on show, as for API keys: it is never shown again.
 */
export function CreateWebhookForm(props: { onCreated: (hook: CreatedWebhook) => void; blocked?: boolean }) {
  const blocked = props.blocked ?? false;
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEvent[]>(['RUN_FAILED']);
  const [state, create] = useMutation<{ createWebhook: CreatedWebhook }>(CREATE_WEBHOOK);

  const toggle = (e: WebhookEvent, on: boolean) => setEvents((now) => (on ? [...now.filter((x) => x !== e), e] : now.filter((x) => x !== e)));

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    if (blocked) return;
    const result = await create({ input: { url, events } });
    if (result.data?.createWebhook) {
      setUrl('');
      props.onCreated(result.data.createWebhook);
    }
  };

  return (
    <form className="panel create-key" onSubmit={onSubmit} aria-labelledby="create-webhook-title">
      <h2 id="create-webhook-title">New webhook</h2>
      <div className="toolbar">
        <label className="field">
          URL
          <input
            type="url"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            maxLength={2048}
            required
            placeholder="https://example.com/weft-events"
            autoComplete="off"
          />
        </label>
        <fieldset className="field">
          <legend>Events</legend>
          {EVENTS.map((e) => (
            <label key={e.event}>
              <input type="checkbox" checked={events.includes(e.event)} onChange={(x) => toggle(e.event, x.target.checked)} /> {e.name}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={state.fetching || blocked || events.length === 0}>
          Create webhook
        </button>
      </div>
      {blocked && <p className="hint">Copy the secret shown, then press Done</p>}
      <p className="hint">
        Each delivery is a POST signed with the secret (weft-signature); a 2xx answer ends it, anything else is tried again, 15 times at most.
      </p>
      <ErrorText error={state.error} />
    </form>
  );
}
