import { useState } from 'react';
import { useMutation } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { InlineConfirm } from '../../components/InlineConfirm.js';
import { TimeCell } from '../runs/RunsTable.js';
import { DELETE_WEBHOOK, eventName, type WebhookRow } from './operations.js';

/** The tenant's webhooks, oldest first: "Deliveries" shows one's deliveries; "Delete" asks first ("Confirm delete" / "Cancel"). */
export function WebhooksTable(props: { hooks: WebhookRow[]; shown: string | null; onShow: (id: string | null) => void; onDeleted: () => void }) {
  const [confirming, setConfirming] = useState<string | null>(null);
  const [state, remove] = useMutation(DELETE_WEBHOOK);
  const [failed, setFailed] = useState<typeof state.error>(undefined);

  const confirm = async (id: string) => {
    setFailed(undefined);
    const result = await remove({ id });
    setConfirming(null);
    if (result.error) setFailed(result.error);
    else {
      if (props.shown === id) props.onShow(null);
      props.onDeleted();
    }
  };

  if (props.hooks.length === 0) return <p className="muted">No webhooks yet.</p>;
  return (
    <>
      <ErrorText error={failed} />
      <div className="table-wrap">
        <table className="keys webhooks">
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {props.hooks.map((w) => (
              <tr key={w.id} data-webhook-id={w.id}>
                <td className="mono">{w.url}</td>
                <td>{w.events.map(eventName).join(', ')}</td>
                <td>
                  <TimeCell at={w.createdAt} />
                </td>
                <td className="key-actions">
                  <button type="button" className="quiet" aria-pressed={props.shown === w.id} onClick={() => props.onShow(props.shown === w.id ? null : w.id)}>
                    Deliveries
                  </button>
                  {confirming !== w.id && (
                    <button type="button" className="quiet" onClick={() => (setFailed(undefined), setConfirming(w.id))}>
                      Delete
                    </button>
                  )}
                  {confirming === w.id && (
                    <InlineConfirm
                      label={`Delete the webhook to ${w.url}?`}
                      action="Confirm delete"
                      busy={state.fetching}
                      onConfirm={() => confirm(w.id)}
                      onCancel={() => setConfirming(null)}
                    >
                      Delete the webhook to {w.url}? Nothing more is sent to it, and its deliveries are deleted.
                    </InlineConfirm>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
