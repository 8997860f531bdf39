import type { Storage as GraphiQLStorage } from '@graphiql/toolkit';

/** GraphiQL's keys all start so: `graphiql:query`, `graphiql:variables`, `graphiql:headers`, `graphiql:tabState`… */
const PREFIX = 'graphiql:';

function ownKeys(store: globalThis.Storage): string[] {
  const keys: string[] = [];
  for (let i = 0; i < store.length; i++) {
    const k = store.key(i);
    if (k?.startsWith(PREFIX)) keys.push(k);
  }
  return keys;
}

/** GraphiQL's storage for one key's session: {@link openGraphiQLStorage}. */
export interface GraphiQLSessionStorage extends GraphiQLStorage {
  /** Drops every later write: what a GraphiQL being unmounted saves after its key was forgotten. */
  close(): void;
}

/**
 * Where GraphiQL keeps what is typed in it (queries, variables, headers, tabs, history): this
 * tab's sessionStorage, not localStorage, so signal payloads and configs typed there do not
 * outlive the tab, and {@link forgetGraphiQL} removes them at sign-out. GraphiQL adds the
 * `graphiql:` prefix to the keys it passes. Once closed, writes are dropped.
 */
export function openGraphiQLStorage(): GraphiQLSessionStorage {
  let open = true;
  return {
    getItem: (key) => sessionStorage.getItem(key),
    setItem: (key, value) => {
      if (open) sessionStorage.setItem(key, value);
    },
    removeItem: (key) => sessionStorage.removeItem(key),
    get length() {
      return ownKeys(sessionStorage).length;
    },
    clear() {
      for (const k of ownKeys(sessionStorage)) sessionStorage.removeItem(k);
    },
    close() {
      open = false;
    },
  };
}

/**
 * Removes everything GraphiQL keeps, from this tab's sessionStorage and from localStorage (where
 * GraphiQL keeps it by default, so a build without {@link openGraphiQLStorage} may have left some).
 */
export function forgetGraphiQL(): void {
  for (const store of [sessionStorage, localStorage]) for (const k of ownKeys(store)) store.removeItem(k);
}
