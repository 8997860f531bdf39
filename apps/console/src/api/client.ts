import { Client, cacheExchange, fetchExchange, mapExchange, subscriptionExchange, type CombinedError } from '@urql/core';
import { createClient as createSocket, type Client as SocketClient } from 'graphql-ws';

/** The API's GraphQL path: HTTP POST for queries and mutations, graphql-ws on the same path. */
export const GRAPHQL_PATH = '/graphql';

/** graphql-ws close code the API uses for a missing, bad or revoked key. */
const CLOSE_UNAUTHENTICATED = 4401;

/** A GraphQL client bound to one API key, and how to let it go. */
export interface ApiConnection {
  client: Client;
  /**
   * Calls `listener` each time the socket connects again after a loss. Changes announced while
   * it was down are not replayed, so a page that follows them reads its data again. Returns the
   * function that removes the listener.
   */
  onReconnected(listener: () => void): () => void;
  dispose(): void;
}

/**
 * A urql client for `key`: queries and mutations over HTTP with `Authorization: Bearer <key>`,
 * subscriptions over one graphql-ws socket on the same origin (reconnecting after a network
 * loss). `onUnauthenticated` is called once the API refuses the key (an UNAUTHENTICATED error
 * over HTTP, or the socket closed with 4401): the key was revoked or never valid.
 */
export function connect(key: string, onUnauthenticated: () => void): ApiConnection {
  const authorization = `Bearer ${key}`;
  let refused = false;
  const refuse = () => {
    if (refused) return;
    refused = true;
    onUnauthenticated();
  };
  const reconnected = new Set<() => void>();
  const socket: SocketClient = createSocket({
    url: socketUrl(),
    connectionParams: { authorization },
    lazy: true,
    retryAttempts: Infinity,
    shouldRetry: (event) => !(isCloseEvent(event) && event.code === CLOSE_UNAUTHENTICATED),
    on: {
      closed: (event) => isCloseEvent(event) && event.code === CLOSE_UNAUTHENTICATED && refuse(),
      connected: (_socket, _payload, wasRetry) => wasRetry && reconnected.forEach((listener) => listener()),
    },
  });
  const client = new Client({
    url: GRAPHQL_PATH,
    requestPolicy: 'cache-and-network',
    // urql sends short queries as GET by default; the API (Apollo's CSRF prevention) refuses a
    // GET without a preflight header, so every operation goes as a JSON POST.
    preferGetMethod: false,
    fetchOptions: () => ({ headers: { authorization } }),
    exchanges: [
      mapExchange({ onError: (error) => isUnauthenticated(error) && refuse() }),
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: socket.subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
  return {
    client,
    onReconnected: (listener) => {
      reconnected.add(listener);
      return () => reconnected.delete(listener);
    },
    // graphql-ws's dispose waits for a connection still being made, and rejects with its close
    // (a revoked key's 4401): the socket is gone either way, so that is nothing to report.
    dispose: () => void Promise.resolve(socket.dispose()).catch(() => {}),
  };
}

/** True when the API refused the key (HTTP 401, or an UNAUTHENTICATED GraphQL error). */
export function isUnauthenticated(error: CombinedError): boolean {
  const status = (error.response as { status?: number } | undefined)?.status;
  return status === 401 || error.graphQLErrors.some((e) => e.extensions?.code === 'UNAUTHENTICATED');
}

function socketUrl(): string {
  const { protocol, host } = window.location;
  return `${protocol === 'https:' ? 'wss:' : 'ws:'}//${host}${GRAPHQL_PATH}`;
}

function isCloseEvent(event: unknown): event is { code: number } {
  return typeof event === 'object' && event !== null && typeof (event as { code?: unknown }).code === 'number';
}
