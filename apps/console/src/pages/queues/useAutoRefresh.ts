import { useEffect, useState } from 'react';

/**
 * Calls `refresh` every `everyMs` while the tab is visible (and at once when it becomes visible
 * again); returns the time of the last tick, so "… ago" texts move on with it.
 */
export function useAutoRefresh(refresh: () => void, everyMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const tick = () => {
      if (document.visibilityState === 'hidden') return;
      setNow(Date.now());
      refresh();
    };
    const timer = window.setInterval(tick, everyMs);
    document.addEventListener('visibilitychange', tick);
    return () => {
      window.clearInterval(timer);
      document.removeEventListener('visibilitychange', tick);
    };
  }, [refresh, everyMs]);
  return now;
}
