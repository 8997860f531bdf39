import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, type ExecutionResult } from 'graphql';
import { refusalOf, ResponseTooLargeError } from '../runs/response-budget.js';
import { formatError } from './error-formatter.js';

/**
 * Answers an HTTP operation that passed its stored-JSON budget (WEFT_MAX_RESPONSE_BYTES) with
 * the refusal alone, HTTP 400 like the other limits: none of the data read before the refusal
 * is sent.
 */
export const responseLimitPlugin: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async willSendResponse({ contextValue, response }) {
        const refused = refusalOf(contextValue as object);
        if (!refused || response.body.kind !== 'single') return;
        response.body.singleResult = { errors: [formatError({ message: refused.message }, refused)] };
        response.http.status = 400;
      },
    };
  },
};

/** The same for one graphql-ws result (an operation, or one event of a subscription): the refusal alone. */
export function withoutRefusedData(result: ExecutionResult): ExecutionResult {
  const refused = result.errors?.find((e) => refusal(e) !== undefined);
  return refused ? { errors: [refused] } : result;
}

function refusal(error: unknown): ResponseTooLargeError | undefined {
  for (let e = error, depth = 0; e && depth < 5; depth++) {
    if (e instanceof ResponseTooLargeError) return e;
    e = e instanceof GraphQLError ? e.originalError : undefined;
  }
  return undefined;
}
