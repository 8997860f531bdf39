import { createGraphiQLFetcher, type Fetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { useMemo, useRef, useState, type FormEvent } from 'react';
import { forgetGraphiQL, openGraphiQLStorage } from '../session/graphiql-storage.js';

/** The key is shared with the console (same tab, same sessionStorage entry), never in localStorage. */
export const STORAGE_KEY = 'weft.console.apiKey';

/** The API's GraphQL path: HTTP POST for queries and mutations, graphql-ws on the same path. */
const GRAPHQL_PATH = '/graphql';

/**
 * A GraphiQL fetcher bound to `key`: queries, mutations and the schema's introspection over HTTP
 * POST to this origin's /graphql, subscriptions over graphql-ws on the same path, both with
 * `Authorization: Bearer <key>` (over the socket in its connection parameters).
 */
export function ideFetcher(key: string, location: Pick<Location, 'protocol' | 'host'> = window.location): Fetcher {
  const authorization = `Bearer ${key}`;
  return createGraphiQLFetcher({
    url: GRAPHQL_PATH,
    subscriptionUrl: `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}${GRAPHQL_PATH}`,
    headers: { authorization },
    wsConnectionParams: { authorization },
  });
}

/**
 * The key field's placeholder: which key is in use, by its first 9 characters ("weft_" and four
 * more), never the whole key.
 */
export function keyPlaceholder(key: string | null): string {
  return key ? `key in use: ${key.slice(0, 9)}…` : 'weft_…';
}

/**
 * The GraphQL IDE page (GET /graphql in a browser): an API key field, then GraphiQL talking to
 * this API with that key, so the schema, the docs and autocompletion load for what the key may
 * see. Everything it runs is in the console's bundle (monaco's workers included); it reaches
 * nothing but this origin. A console user of the same tab arrives with the key already in use.
 * The key lives in state and sessionStorage only, never in the DOM: the field is uncontrolled,
 * starts empty and is emptied once its key is taken (a controlled input would write the key
 * into its value attribute, and so into the page's HTML). What is typed into GraphiQL is kept in
 * sessionStorage too, and "Forget key" removes it with the key.
 */
export function IdePage() {
  const [key, setKey] = useState<string | null>(() => sessionStorage.getItem(STORAGE_KEY));
  const field = useRef<HTMLInputElement>(null);
  const fetcher = useMemo(() => (key ? ideFetcher(key) : null), [key]);
  const storage = useMemo(() => (key ? openGraphiQLStorage() : null), [key]);

  const useKey = (event: FormEvent) => {
    event.preventDefault();
    const input = field.current;
    const typed = input?.value.trim() ?? '';
    if (input) input.value = '';
    // An empty field keeps the key in use ("Forget key" drops it).
    if (!typed) return;
    sessionStorage.setItem(STORAGE_KEY, typed);
    setKey(typed);
  };

  const forgetKey = () => {
    sessionStorage.removeItem(STORAGE_KEY);
    // The GraphiQL about to unmount saves its tabs once more: closed first, it saves nothing.
    storage?.close();
    forgetGraphiQL();
    if (field.current) field.current.value = '';
    setKey(null);
  };

  return (
    <div className="ide">
      <header className="ide-top">
        <a className="brand" href="/">
          Weft console
        </a>
        <form className="ide-key" onSubmit={useKey}>
          <label htmlFor="ide-api-key">API key</label>
          <input id="ide-api-key" name="api-key" type="password" autoComplete="off" spellCheck={false} placeholder={keyPlaceholder(key)} ref={field} />
          <button type="submit">Use key</button>
          {key && (
            <button type="button" onClick={forgetKey}>
              Forget key
            </button>
          )}
        </form>
        <span className="ide-state" role="status">
          {key ? 'Requests carry this key; the schema and docs are what it may see.' : 'Enter an API key to load the schema.'}
        </span>
      </header>
      <main className="ide-main">
        {fetcher ? (
          // A new key is a new GraphiQL: it fetches the schema again with that key.
          <GraphiQL key={key!} fetcher={fetcher} defaultQuery={DEFAULT_QUERY} storage={storage!} />
        ) : (
          <p className="ide-empty">GraphiQL opens once a key is in use. Sign in to the console, or paste a key above.</p>
        )}
      </main>
    </div>
  );
}

const DEFAULT_QUERY = `# The Weft API. Ctrl-Enter runs the query; the docs (book icon) list every type.
{
  whoami {
    tenantId
    keyName
    role
  }
}
`;
