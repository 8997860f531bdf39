import { prettyJson } from './json.js';
import type { Json } from './types.js';

/** How long the one-line preview of a collapsed value may be. */
const PREVIEW_CHARS = 32;
/** How much of a collapsed value its preview's tooltip holds. */
const TITLE_CHARS = 2000;

/**
 * A JSON value: indented in a block (`block`), or in a table cell as a one-line preview that
 * opens into the block (`details`). `redacted`: true for a sensitive node's value (never
 * shown), false for a node known not to be sensitive, absent when unknown (then a null reads
 * "redacted or empty").
 */
export function JsonField(props: { value: Json | undefined; label: string; redacted?: boolean; mode?: 'block' | 'details' }) {
  if (props.redacted)
    return (
      <span className="json-none" title="The node is sensitive: the API never returns its input or output.">
        redacted (sensitive node)
      </span>
    );
  if (props.value === undefined || props.value === null) {
    return <span className="json-none">{props.redacted === undefined ? 'redacted or empty' : props.value === null ? 'null' : 'empty'}</span>;
  }
  const text = prettyJson(props.value);
  if (props.mode !== 'details') {
    return (
      <pre className="json" role="group" aria-label={props.label} tabIndex={0}>
        {text}
      </pre>
    );
  }
  const compact = JSON.stringify(props.value);
  if (compact.length <= PREVIEW_CHARS && !compact.includes('\n')) return <code className="json-inline">{compact}</code>;
  return (
    <details className="json-details">
      <summary title={compact.length > TITLE_CHARS ? `${compact.slice(0, TITLE_CHARS)}…` : compact}>
        <code className="json-inline">{`${compact.slice(0, PREVIEW_CHARS)}…`}</code>
        <span className="visually-hidden"> {props.label}</span>
      </summary>
      <pre className="json" role="group" aria-label={props.label} tabIndex={0}>
        {text}
      </pre>
    </details>
  );
}
