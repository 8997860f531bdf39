import { loopIterationText } from '@weft/contract';
import { useState } from 'react';
import { JsonField } from './JsonField.js';
import { displayAttempt } from './model.js';
import { TimeCell } from './RunsTable.js';
import type { RunEvent } from './types.js';

/** How many of the latest events are shown before "Show all". */
const SHOWN = 200;

/**
 * The run's history, oldest first: each applied event with its seq, type, node, attempt and
 * time; payload and actions open on demand. An event that changed nothing says
 * "ignored: <why>", a refused one "rejected: <why>".
 */
export function HistoryTimeline(props: { history: readonly RunEvent[] }) {
  const [all, setAll] = useState(false);
  const { history } = props;
  if (history.length === 0) return <p className="empty-state">No event yet.</p>;
  const hidden = all ? 0 : Math.max(0, history.length - SHOWN);
  const events = hidden ? history.slice(hidden) : history;
  return (
    <>
      {hidden > 0 && (
        <p className="muted">
          {hidden} older events are hidden.{' '}
          <button type="button" className="quiet" onClick={() => setAll(true)}>
            Show all {history.length} events
          </button>
        </p>
      )}
      <ol className="timeline">
        {events.map((e) => (
          <li key={e.seq} data-seq={e.seq} data-event-type={e.type} className={e.error ? 'rejected' : e.ignored ? 'ignored' : undefined}>
            <div className="event-line">
              <span className="event-seq mono">#{e.seq}</span>
              <strong className="event-type">{e.type}</strong>
              {e.nodeId && (
                <span>
                  node <code>{e.nodeId}</code>
                  {loopIterationOf(e) !== null && <span className="muted"> {loopIterationText(loopIterationOf(e)!)}</span>}
                </span>
              )}
              {e.attempt !== null && <span className="muted">attempt {displayAttempt(e.attempt)}</span>}
              <span className="event-at muted">
                <TimeCell at={e.at} short />
              </span>
            </div>
            {e.ignored && <div className="event-mark event-ignored">ignored: {e.ignored}</div>}
            {e.error && <div className="event-mark event-rejected">rejected: {e.error}</div>}
            <EventDetails event={e} />
          </li>
        ))}
      </ol>
    </>
  );
}

/** The 0-based loop iteration a DO_WHILE body node's report was for (its payload's `loopIteration`); null for other events. */
function loopIterationOf(e: RunEvent): number | null {
  const p = e.payload;
  return p && typeof p === 'object' && !Array.isArray(p) && typeof p.loopIteration === 'number' ? p.loopIteration : null;
}

function EventDetails(props: { event: RunEvent }) {
  const { event } = props;
  const hasPayload = event.payload !== null && event.payload !== undefined;
  const actions = Array.isArray(event.actions) ? event.actions : null;
  const hasActions = actions ? actions.length > 0 : event.actions !== null && event.actions !== undefined;
  if (!hasPayload && !hasActions) return null;
  return (
    <div className="event-details">
      {hasPayload && (
        <details>
          <summary>Payload</summary>
          <JsonField value={event.payload} label={`Payload of event ${event.seq}`} redacted={false} />
        </details>
      )}
      {hasActions && (
        <details>
          <summary>{actions ? `Actions (${actions.length})` : 'Actions'}</summary>
          <JsonField value={event.actions} label={`Actions of event ${event.seq}`} redacted={false} />
        </details>
      )}
    </div>
  );
}
