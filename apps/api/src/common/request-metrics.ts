import type { ApolloServerPlugin } from '@apollo/server';
import type { OperationDefinitionNode } from 'graphql';
import type { WeftMetrics } from '@weft/platform';

/**
 * Times every GraphQL operation over HTTP into `weft_api_request_duration_seconds`, labelled by
 * its root field (`startRun`; `multiple` when it selects several, `__introspection` for
 * introspection, `unparsed` when it never resolved: a syntax or validation error), its type
 * (`query`, `mutation`, `subscription` or `unknown`) and its outcome (`ok`, or the first error's
 * code). Aliases and operation names are not used: clients choose them, and labels stay bounded.
 * A request refused before it starts (a missing or bad key: UNAUTHENTICATED) is not counted.
 */
export function requestMetricsPlugin(metrics: WeftMetrics): ApolloServerPlugin {
  return {
    async requestDidStart() {
      const started = performance.now();
      let field = 'unparsed';
      let type = 'unknown';
      return {
        async didResolveOperation({ operation }) {
          if (!operation) return;
          type = operation.operation;
          field = rootField(operation);
        },
        async willSendResponse({ response }) {
          // The errors as sent: their codes are the ones the error formatter gave them.
          const sent = response.body.kind === 'single' ? response.body.singleResult.errors : undefined;
          const outcome = sent?.length ? errorCode(sent[0]?.extensions?.code) : 'ok';
          metrics.apiRequests.observe({ field, type, outcome }, (performance.now() - started) / 1000);
        },
      };
    },
  };
}

function rootField(op: OperationDefinitionNode): string {
  const names = op.selectionSet.selections.map((s) => (s.kind === 'Field' ? s.name.value : s.kind));
  if (names.length !== 1) return names.every((n) => n.startsWith('__')) ? '__introspection' : 'multiple';
  return names[0]!.startsWith('__') ? '__introspection' : names[0]!;
}

function errorCode(code: unknown): string {
  return typeof code === 'string' && /^[A-Z][A-Z_]{0,39}$/.test(code) ? code : 'ERROR';
}
