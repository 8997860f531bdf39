import type { ApolloServerPlugin } from '@apollo/server';
import type { ApolloDriverConfig } from '@nestjs/apollo';
import type { GraphQLSchemaHost } from '@nestjs/graphql';
import { GraphQLError, parse, validate, type DocumentNode, type ExecutionArgs } from 'graphql';
import type { ServerOptions, Context as WsContext, SubscribePayload } from 'graphql-ws';
import { WeftError } from '@weft/engine';
import type { AuthService } from './auth/auth.service.js';
import type { GqlContext } from './auth/gql-context.js';
import type { Principal } from './auth/principal.js';
import { formatError, formatExecutionResult, formatValidationErrors } from './common/error-formatter.js';
import { assessOperation, limitExceeded, QUERY_LIMITS } from './common/query-limits.js';
import { requestMetricsPlugin } from './common/request-metrics.js';
import { responseLimitPlugin, withoutRefusedData } from './common/response-limit.plugin.js';
import type { WeftMetrics } from '@weft/platform';
import { CLOSE_TOO_MANY_KEY_CONNECTIONS, type ConnectionLimits } from './sockets/connection-limits.js';

/** What the graphql-ws socket carries once onConnect authenticated it. */
interface SocketExtra {
  principal?: Principal;
  /** The credentials the socket connected with, checked again while it stays open. */
  authorization?: unknown;
  /** When they were last found valid, ms since the epoch. */
  authenticatedAt?: number;
  /** The periodic re-check of those credentials. */
  recheck?: ReturnType<typeof setInterval>;
  socket?: { close(code: number, reason: string): void };
}

/** How often an open socket's key is checked again by default (a revoked key's socket closes within this). */
export const SOCKET_KEY_RECHECK_MS = 10_000;

/**
 * How long a socket may stay open without sending connection_init before graphql-ws closes it
 * with 4408, ms. Clients send it as soon as the socket opens; every pending socket holds a place
 * under the per-address and total caps for this long.
 */
export const SOCKET_INIT_WAIT_MS = 3_000;

/** graphql-ws close codes: 4401 is final for clients (no reconnect); 1013 asks them to retry later. */
const CLOSE_UNAUTHENTICATED = 4401;
const CLOSE_TRY_AGAIN = 1013;

/** The path of GraphQL over HTTP and of its graphql-ws WebSocket. */
export const GRAPHQL_PATH = '/graphql';

/**
 * The GraphQL options of the API: code-first schema built in memory, one error formatter for
 * HTTP and WebSocket, and the caller's tenant in the context. The graphql-ws server is not
 * Nest's (which keeps ws's 100 MiB message default and counts no connections): it is
 * {@link SocketServer}, with the options of {@link socketOptions}.
 *
 * Authentication, the same on both transports: the key is sent as `Bearer <key>` (the scheme in
 * any case, e.g. `bearer`), in the `Authorization` header over HTTP and in
 * `connectionParams.authorization` over graphql-ws; a bare key is refused on both. Over HTTP a
 * missing or bad key fails the whole request with UNAUTHENTICATED (HTTP 401); over graphql-ws
 * the key is checked in onConnect and a bad one closes the socket with 4401 before any
 * operation runs. It is checked again before each operation the socket starts and every
 * `keyRecheckMs` of {@link socketOptions} (default {@link SOCKET_KEY_RECHECK_MS}) while it stays
 * open: a key revoked meanwhile closes it with 4401, ending its subscriptions.
 *
 * Message size, the same on both transports: at most `MAX_MESSAGE_BYTES` (4 MiB), an HTTP body
 * (413 above) or a graphql-ws message (closed with 1009 above, by ws, before it is parsed).
 *
 * Cost limits, the same on both transports ({@link QUERY_LIMITS}): a document of more than
 * maxTokens tokens fails to parse; a valid operation that exceeds a limit is refused with
 * BAD_USER_INPUT before it runs (over HTTP in didResolveOperation, over graphql-ws in
 * onSubscribe, which also caps the operations in flight on one connection). Request batching
 * stays off. An answer whose stored JSON passes WEFT_MAX_RESPONSE_BYTES is the refusal alone
 * (see `runs/response-budget.ts`).
 */
export function graphqlOptions(auth: AuthService, metrics?: WeftMetrics): Omit<ApolloDriverConfig, 'driver'> {
  return {
    path: GRAPHQL_PATH,
    autoSchemaFile: true,
    sortSchema: true,
    introspection: true,
    // Browsers get the bundled IDE page at GET /graphql (ConsoleModule), never one from a CDN.
    graphiql: false,
    includeStacktraceInErrorResponses: false,
    autoTransformHttpErrors: false,
    allowBatchedHttpRequests: false,
    parseOptions: { maxTokens: QUERY_LIMITS.maxTokens },
    plugins: metrics ? [costLimitPlugin, responseLimitPlugin, requestMetricsPlugin(metrics)] : [costLimitPlugin, responseLimitPlugin],
    formatError,
    context: (arg: unknown): Promise<GqlContext> => httpContext(arg, auth),
  };
}

/**
 * The graphql-ws options of {@link SocketServer}: authentication in onConnect (and the per-key
 * and per-tenant connection caps of `limits`, counted once the key is known), the key's periodic re-check, the
 * cost limits in onSubscribe, the one error formatter and the operation's context.
 */
export function socketOptions(auth: AuthService, schemaHost: GraphQLSchemaHost, limits: ConnectionLimits, opts: { keyRecheckMs?: number } = {}): ServerOptions {
  const recheckMs = opts.keyRecheckMs ?? SOCKET_KEY_RECHECK_MS;
  return {
    schema: schemaHost.schema,
    context: (ctx) => socketContext(ctx),
    connectionInitWaitTimeout: SOCKET_INIT_WAIT_MS,
    onConnect: (ctx) => authenticateSocket(ctx, auth, limits, recheckMs),
    onClose: (ctx) => clearInterval((ctx.extra as SocketExtra).recheck),
    onSubscribe: async (ctx, _id, payload) => {
      if (!(await recheckSocket(ctx, auth))) return [new GraphQLError('Invalid API key', { extensions: { code: 'UNAUTHENTICATED' } })];
      return prepareSocketOperation(ctx, payload, schemaHost);
    },
    onNext: (_ctx, _id, _payload, _args, result) => formatExecutionResult(withoutRefusedData(result)),
    // The errors of a subscription that failed validation.
    onError: (_ctx, _id, _payload, errors) => formatValidationErrors(errors),
  };
}

/** Refuses an HTTP operation over the limits once Apollo parsed, validated and picked it. */
const costLimitPlugin: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async didResolveOperation({ request, document, schema, operation }) {
        if (operation?.operation === 'subscription') {
          throw new GraphQLError('Subscriptions are served over graphql-ws (a WebSocket on this same path), not over HTTP POST', {
            extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
          });
        }
        const problems = assessOperation(schema, document, request.operationName, request.variables);
        if (problems.length > 0) throw limitExceeded(problems);
      },
    };
  },
};

/**
 * Operation texts that parsed and validated against a schema, with their documents (a watch
 * subscribes with the same text for every run: it is parsed and validated once). Bounded: texts
 * of at most {@link VALID_DOCUMENT_CHARS} characters, and past {@link VALID_DOCUMENTS_MAX} of
 * them the cache starts again.
 */
const validDocuments = new WeakMap<object, Map<string, DocumentNode>>();
const VALID_DOCUMENTS_MAX = 500;
const VALID_DOCUMENT_CHARS = 4_096;

/**
 * What graphql-ws would do for a Subscribe message (parse, validate), plus the cost limits and
 * the cap on operations in flight on the connection. Errors go back in an Error message
 * (through onError and the formatter); otherwise graphql-ws runs the returned arguments.
 */
function prepareSocketOperation(ctx: WsContext, payload: SubscribePayload, schemaHost: GraphQLSchemaHost): ExecutionArgs | GraphQLError[] {
  // graphql-ws registers the operation before calling onSubscribe and forgets it once it ended.
  const inFlight = Object.keys(ctx.subscriptions).length;
  if (inFlight > QUERY_LIMITS.maxSocketOperations) {
    const message = `at most ${QUERY_LIMITS.maxSocketOperations} operations (subscriptions included) may run at once on one connection`;
    return [limitExceeded([{ message }], 'Too many operations')];
  }
  const schema = schemaHost.schema;
  const valid = validDocuments.get(schema) ?? validDocuments.set(schema, new Map()).get(schema)!;
  let document = valid.get(payload.query);
  if (!document) {
    try {
      document = parse(payload.query, { maxTokens: QUERY_LIMITS.maxTokens });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return [new GraphQLError(message, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } })];
    }
    const errors = validate(schema, document);
    if (errors.length > 0) return [...errors];
    if (payload.query.length <= VALID_DOCUMENT_CHARS) {
      if (valid.size >= VALID_DOCUMENTS_MAX) valid.clear();
      valid.set(payload.query, document);
    }
  }
  const problems = assessOperation(schema, document, payload.operationName, payload.variables);
  if (problems.length > 0) return [limitExceeded(problems)];
  return { schema, document, operationName: payload.operationName, variableValues: payload.variables };
}

async function httpContext(arg: unknown, auth: AuthService): Promise<GqlContext> {
  const req = (arg as { req?: { headers?: Record<string, unknown> } }).req;
  try {
    const authorization = req?.headers?.authorization;
    const traceparent = req?.headers?.traceparent;
    return {
      principal: await auth.authenticate(authorization),
      authorization,
      authenticatedAt: Date.now(),
      ...(typeof traceparent === 'string' ? { traceparent } : {}),
    };
  } catch (err) {
    if (err instanceof WeftError && err.code === 'UNAUTHENTICATED') {
      throw new GraphQLError(err.message, { originalError: err, extensions: { code: err.code, http: { status: 401 } } });
    }
    throw err;
  }
}

function socketContext(ctx: WsContext): GqlContext {
  // Set by onConnect (and refreshed by each re-check); an absent principal makes the guard
  // answer UNAUTHENTICATED.
  const extra = ctx.extra as SocketExtra;
  return { principal: extra.principal!, authorization: extra.authorization, authenticatedAt: extra.authenticatedAt };
}

async function authenticateSocket(ctx: WsContext, auth: AuthService, limits: ConnectionLimits, recheckMs: number): Promise<boolean> {
  const extra = ctx.extra as SocketExtra;
  const params = ctx.connectionParams ?? {};
  try {
    extra.authorization = params.authorization ?? params.Authorization;
    extra.principal = await auth.authenticate(extra.authorization);
    extra.authenticatedAt = Date.now();
    // Counted under its key and tenant once the key is known; a socket that closed meanwhile is not.
    const bound = extra.socket ? limits.bindKey(extra.socket, extra.principal.keyId, extra.principal.tenantId) : false;
    if (bound !== true) {
      extra.socket?.close(CLOSE_TOO_MANY_KEY_CONNECTIONS, bound ? bound.refused : limits.tooManyForKeyReason());
      return false;
    }
    extra.recheck = setInterval(() => void recheckSocket(ctx, auth), recheckMs);
    extra.recheck.unref?.();
    return true;
  } catch (err) {
    const unauthenticated = err instanceof WeftError && err.code === 'UNAUTHENTICATED';
    extra.socket?.close(unauthenticated ? CLOSE_UNAUTHENTICATED : CLOSE_TRY_AGAIN, unauthenticated ? 'UNAUTHENTICATED' : 'TRY_AGAIN_LATER');
    return false;
  }
}

/**
 * Checks the socket's key again; when it is no longer valid (revoked) closes the socket with
 * 4401 and returns false. A transient failure (database unreachable) keeps the socket open.
 */
async function recheckSocket(ctx: WsContext, auth: AuthService): Promise<boolean> {
  const extra = ctx.extra as SocketExtra;
  try {
    extra.principal = await auth.reauthenticate(extra.authorization, extra.principal);
    extra.authenticatedAt = Date.now();
    return true;
  } catch (err) {
    if (!(err instanceof WeftError && err.code === 'UNAUTHENTICATED')) return true;
    clearInterval(extra.recheck);
    extra.socket?.close(CLOSE_UNAUTHENTICATED, 'UNAUTHENTICATED');
    return false;
  }
}
