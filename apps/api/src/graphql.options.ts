import type { ApolloDriverConfig } from '@nestjs/apollo';
import { GraphQLError } from 'graphql';
import type { Context as WsContext } from 'graphql-ws';
import { WeftError } from '@weft/engine';
import type { AuthService } from './auth/auth.service.js';
import type { GqlContext } from './auth/gql-context.js';
import type { Principal } from './auth/principal.js';
import { formatError, formatExecutionResult, formatValidationErrors } from './common/error-formatter.js';

/** What the graphql-ws socket carries once onConnect authenticated it. */
interface SocketExtra {
  principal?: Principal;
  socket?: { close(code: number, reason: string): void };
}

/** graphql-ws close codes: 4401 is final for clients (no reconnect); 1013 asks them to retry later. */
const CLOSE_UNAUTHENTICATED = 4401;
const CLOSE_TRY_AGAIN = 1013;

/**
 * The GraphQL options of the API: code-first schema built in memory, graphql-ws only, one error
 * formatter for HTTP and WebSocket, and the caller's tenant in the context.
 *
 * Authentication: over HTTP the context factory reads `Authorization: Bearer <key>`; a missing
 * or bad key fails the whole request with UNAUTHENTICATED (HTTP 401). Over graphql-ws,
 * `connectionParams.authorization` (`Bearer <key>`, or the bare key) is checked once in
 * onConnect; a bad key closes the socket with 4401 before any operation runs.
 */
export function graphqlOptions(auth: AuthService): Omit<ApolloDriverConfig, 'driver'> {
  return {
    path: '/graphql',
    autoSchemaFile: true,
    sortSchema: true,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    autoTransformHttpErrors: false,
    formatError,
    context: (arg: unknown): Promise<GqlContext> | GqlContext => (isWsContext(arg) ? socketContext(arg) : httpContext(arg, auth)),
    subscriptions: {
      'graphql-ws': {
        connectionInitWaitTimeout: 10_000,
        onConnect: (ctx) => authenticateSocket(ctx, auth),
        onNext: (_ctx, _id, _payload, _args, result) => formatExecutionResult(result),
        // Not in Nest's type, passed through to graphql-ws all the same: the errors of a
        // subscription that failed validation.
        ...({ onError: (_ctx: WsContext, _id: string, _payload: unknown, errors: readonly GraphQLError[]) => formatValidationErrors(errors) } as object),
      },
    },
  };
}

async function httpContext(arg: unknown, auth: AuthService): Promise<GqlContext> {
  const req = (arg as { req?: { headers?: Record<string, unknown> } }).req;
  try {
    return { principal: await auth.authenticate(req?.headers?.authorization) };
  } catch (err) {
    if (err instanceof WeftError && err.code === 'UNAUTHENTICATED') {
      throw new GraphQLError(err.message, { originalError: err, extensions: { code: err.code, http: { status: 401 } } });
    }
    throw err;
  }
}

function socketContext(ctx: WsContext): GqlContext {
  // Set by onConnect; an absent principal makes the guard answer UNAUTHENTICATED.
  return { principal: (ctx.extra as SocketExtra).principal! };
}

async function authenticateSocket(ctx: WsContext, auth: AuthService): Promise<boolean> {
  const extra = ctx.extra as SocketExtra;
  const params = ctx.connectionParams ?? {};
  const raw = params.authorization ?? params.Authorization;
  const header = typeof raw === 'string' && !/^\s*bearer\s/i.test(raw) ? `Bearer ${raw}` : raw;
  try {
    extra.principal = await auth.authenticate(header);
    return true;
  } catch (err) {
    const unauthenticated = err instanceof WeftError && err.code === 'UNAUTHENTICATED';
    extra.socket?.close(unauthenticated ? CLOSE_UNAUTHENTICATED : CLOSE_TRY_AGAIN, unauthenticated ? 'UNAUTHENTICATED' : 'TRY_AGAIN_LATER');
    return false;
  }
}

function isWsContext(arg: unknown): arg is WsContext {
  return typeof arg === 'object' && arg !== null && 'connectionInitReceived' in arg && 'extra' in arg;
}
