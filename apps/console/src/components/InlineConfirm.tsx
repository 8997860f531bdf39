import type { ReactNode } from 'react';

/**
 * The question a destructive button asks in place before it acts: `children` says what will
 * happen, `action` names the danger button ("Confirm delete"), disabled while `busy`; "Cancel"
 * takes the focus, so Enter never confirms by accident.
 */
export function InlineConfirm(props: { label: string; action: string; busy: boolean; onConfirm: () => void; onCancel: () => void; children: ReactNode }) {
  return (
    <div className="confirm" role="group" aria-label={props.label}>
      <span>{props.children}</span>
      <span className="confirm-buttons">
        <button type="button" className="danger" disabled={props.busy} onClick={props.onConfirm}>
          {props.action}
        </button>
        <button type="button" className="quiet" autoFocus onClick={props.onCancel}>
          Cancel
        </button>
      </span>
    </div>
  );
}
