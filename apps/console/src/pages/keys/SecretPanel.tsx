import { useEffect, useRef, useState } from 'react';
import type { CreatedKey } from './operations.js';

/**
 * A new key's secret, shown this once: a copy button and the warning that it cannot be read
 * again. Takes the focus when it appears, so a screen reader announces it.
 */
export function SecretPanel(props: { created: CreatedKey; onDone: () => void }) {
  const { created } = props;
  const panel = useRef<HTMLElement>(null);
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);

  useEffect(() => panel.current?.focus(), [created.id]);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.secret);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard access (an insecure origin, a refused permission): select it for the reader.
      field.current?.select();
      setCopied('Could not copy: the key is selected, copy it with Ctrl+C / ⌘C.');
    }
  };

  return (
    <section ref={panel} tabIndex={-1} className="panel secret" aria-labelledby="secret-title">
      <h2 id="secret-title">
        Key “{created.name}” created ({created.role})
      </h2>
      <p className="secret-warning">
        <strong>Copy this key now: it cannot be read again.</strong> Once this panel is closed, only its prefix <code>{created.keyPrefix}</code> is shown.
      </p>
      <div className="secret-row">
        <input
          ref={field}
          className="mono secret-value"
          readOnly
          value={created.secret}
          aria-label="The new API key"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" className="quiet" onClick={props.onDone}>
          Done
        </button>
      </div>
      <p className="hint" role="status">
        {copied}
      </p>
    </section>
  );
}
