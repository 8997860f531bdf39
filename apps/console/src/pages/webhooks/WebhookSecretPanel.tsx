import { useEffect, useRef } from 'react';
import type { CreatedWebhook } from './operations.js';

/** A new webhook's signing secret, shown this once; takes the focus when it appears, so a screen reader announces it. */
export function WebhookSecretPanel(props: { created: CreatedWebhook; onDone: () => void }) {
  const panel = useRef<HTMLElement>(null);
  useEffect(() => panel.current?.focus(), [props.created.id]);
  return (
    <section ref={panel} tabIndex={-1} className="panel secret" aria-labelledby="webhook-secret-title">
      <h2 id="webhook-secret-title">Webhook created for {props.created.url}</h2>
      <p className="secret-warning">
        <strong>Copy this signing secret now: it cannot be read again.</strong> Receivers check each delivery's weft-signature with it.
      </p>
      <div className="secret-row">
        <input
          className="mono secret-value"
          readOnly
          value={props.created.secret ?? ''}
          aria-label="The webhook's signing secret"
          data-testid="webhook-secret"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" className="quiet" onClick={props.onDone}>
          Done
        </button>
      </div>
    </section>
  );
}
