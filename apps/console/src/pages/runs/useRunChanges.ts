import { useEffect, useRef, useState } from 'react';
import { useClient, type CombinedError } from 'urql';
import { RUN_CHANGED } from './operations.js';
import type { RunChange } from './types.js';

/**
 * Subscribes to `runChanged` (every change of any run of the tenant) while mounted and hands each
 * change to `onChange` (the latest function given, so it may close over fresh state). Returns the
 * subscription's error, if it failed (the page then works without live updates).
 */
export function useRunChanges(onChange: (change: RunChange) => void): CombinedError | null {
  const client = useClient();
  const handler = useRef(onChange);
  handler.current = onChange;
  const [error, setError] = useState<CombinedError | null>(null);

  useEffect(() => {
    const subscription = client.subscription<{ runChanged: RunChange }>(RUN_CHANGED, {}).subscribe((result) => {
      if (result.error) {
        setError(result.error);
        return;
      }
      setError(null);
      if (result.data?.runChanged) handler.current(result.data.runChanged);
    });
    return () => subscription.unsubscribe();
  }, [client]);

  return error;
}
