import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/** One GraphQL error as the API returns it. */
export interface GraphQLErrorShape {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; problems?: { nodeId?: string; path?: string; message: string }[]; [k: string]: unknown };
}

/**
 * The API answered with errors; `code` is the first error's `extensions.code`. Its message has
 * one line (with its problems) per distinct error: fields of one query that fail alike (a
 * workflow and its version, both not found) say it once.
 */
export class WeftApiError extends Error {
  override name = 'WeftApiError';
  constructor(readonly errors: GraphQLErrorShape[]) {
    super([...new Set(errors.map((e) => formatError(e)))].join('\n'));
  }
  get code(): string | undefined {
    return this.errors[0]?.extensions?.code;
  }
}

function formatError(e: GraphQLErrorShape): string {
  const code = e.extensions?.code ? `${e.extensions.code}: ` : '';
  // A lone problem that only repeats the message (`<path>: <message>` or the bare message) adds nothing.
  const all = e.extensions?.problems ?? [];
  const repeats = all.length === 1 && repeatsMessage(all[0]!, e.message);
  const problems = repeats ? [] : all.map((p) => `\n  - ${[p.nodeId, p.path].filter(Boolean).join(' ')}${p.nodeId || p.path ? ': ' : ''}${p.message}`);
  return `${code}${e.message}${problems.join('')}`;
}

/**
 * Whether `problem` says no more than the error's `message`: the same words, or them after its
 * path (`url: must be http or https`), as errors about one input field are worded.
 */
export function repeatsMessage(problem: { path?: string; message: string }, message: string): boolean {
  return problem.message === message || (!!problem.path && `${problem.path}: ${problem.message}` === message);
}

/**
 * An operation's text carrying the types of its answer (`TData`) and variables, made by
 * {@link operation}. {@link WeftClient.request} and {@link WeftClient.subscribe} infer both from
 * it; at run time it is the string itself. A plain string stays untyped (`any`).
 */
export type Operation<TData, TVariables extends Variables = Variables> = string & { readonly __operation?: (variables: TVariables) => TData };

/**
 * `text` typed with the answer and variables types that `npm run codegen` writes for it from
 * schema.graphql, as the CLI's flow commands do. The generator reads only a template literal
 * right after a block comment that says `GraphQL`; a cast (`as`) would take the comment from it,
 * hence a call.
 */
export function operation<TData, TVariables extends Variables = Variables>(text: string): Operation<TData, TVariables> {
  return text;
}

/** An operation's variables by name. */
export type Variables = Record<string, unknown>;

/**
 * A small client of Weft's GraphQL API, used by the CLI, the demo and the end-to-end tests:
 * queries and mutations over HTTP POST, subscriptions over graphql-ws. `url` is the HTTP URL of
 * the endpoint (e.g. `http://127.0.0.1:4000/graphql`); `apiKey` goes in `Authorization: Bearer`.
 */
export class WeftClient {
  private ws?: Client;

  constructor(
    readonly url: string,
    readonly apiKey?: string,
  ) {}

  /** Runs a query or mutation; resolves `data`, rejects with {@link WeftApiError} on GraphQL errors. */
  async request<T = any, V extends Variables = Variables>(query: Operation<T, V> | string, variables: V = {} as V): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(
        `cannot reach the Weft API at ${this.url} (${cause?.code ?? cause?.message ?? (err as Error).message}): is \`weft dev\` (or \`weft api\`) running? Set WEFT_URL to point elsewhere.`,
      );
    }
    const text = await res.text();
    let body: { data?: T; errors?: GraphQLErrorShape[] };
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${this.url} answered ${res.status} with non-JSON: ${text.slice(0, 200)}`);
    }
    if (body.errors?.length) throw new WeftApiError(body.errors);
    if (!res.ok || body.data === undefined) {
      const detail = (body as { message?: string; error?: string }).message ?? (body as { error?: string }).error ?? text.slice(0, 200);
      throw new Error(`${this.url} answered ${res.status}${res.status === 413 ? ' (request too large)' : ''}: ${detail}`);
    }
    return body.data as T;
  }

  /**
   * Subscribes; calls `onNext` with each `data`. Resolves when the server completes the
   * subscription or `dispose()` is called; rejects on an error.
   */
  subscribe<T = any, V extends Variables = Variables>(
    query: Operation<T, V> | string,
    variables: V,
    onNext: (data: T) => void | boolean,
  ): { done: Promise<void>; dispose: () => void } {
    const client = this.wsClient();
    let dispose = () => {};
    const done = new Promise<void>((resolve, reject) => {
      dispose = client.subscribe<T>(
        { query, variables },
        {
          next: (msg) => {
            if (msg.errors?.length) return reject(new WeftApiError(msg.errors as GraphQLErrorShape[]));
            if (onNext(msg.data as T) === false) {
              dispose();
              resolve();
            }
          },
          error: (err) =>
            reject(
              err instanceof Error ? err : new WeftApiError(Array.isArray(err) ? err : [{ message: String((err as { reason?: string })?.reason ?? err) }]),
            ),
          complete: () => resolve(),
        },
      );
    });
    return { done, dispose: () => dispose() };
  }

  /** Closes the WebSocket, if one was opened. */
  async close(): Promise<void> {
    await this.ws?.dispose();
    this.ws = undefined;
  }

  private wsClient(): Client {
    if (!this.ws) {
      this.ws = createClient({
        url: this.url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {},
        retryAttempts: 0,
        lazy: true,
      });
    }
    return this.ws;
  }
}
