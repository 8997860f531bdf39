import type { CombinedError } from '@urql/core';
import { errorText } from '../api/errors.js';

/** An operation's failure in the API's words, announced to screen readers. */
export function ErrorText(props: { error: CombinedError | string | null | undefined }) {
  if (!props.error) return null;
  const text = typeof props.error === 'string' ? props.error : errorText(props.error);
  return (
    <pre className="error" role="alert">
      {text}
    </pre>
  );
}
