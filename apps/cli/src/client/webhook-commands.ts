import { Option, type Command } from 'commander';
import { operation } from '@weft/client';
import { positiveInt } from './arguments.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import type {
  CreateWebhookMutation,
  CreateWebhookMutationVariables,
  DeleteWebhookMutation,
  DeleteWebhookMutationVariables,
  WebhookDeliveriesQuery,
  WebhookDeliveriesQueryVariables,
  WebhookEvent,
  WebhooksQuery,
  WebhooksQueryVariables,
} from './generated/graphql.js';
import { cell, formatData, printAs, table, when, withOutput, type OutputFormat } from './output.js';

/** The events as `--event` names them (as receivers get them in `weft-event`), with the API's names. */
export const WEBHOOK_EVENTS: Record<string, WebhookEvent> = {
  'run.succeeded': 'RUN_SUCCEEDED',
  'run.failed': 'RUN_FAILED',
  'run.cancelled': 'RUN_CANCELLED',
  'run.timed_out': 'RUN_TIMED_OUT',
  'run.paused': 'RUN_PAUSED',
};

/** `RUN_TIMED_OUT` as `run.timed_out`. */
const eventName = (e: WebhookEvent) => e.toLowerCase().replace('_', '.');

/** Creates a webhook; the answer holds its secret, the only time the API gives it. */
const CREATE_WEBHOOK = operation<CreateWebhookMutation, CreateWebhookMutationVariables>(/* GraphQL */ `
  mutation CreateWebhook($i: CreateWebhookInput!) { createWebhook(input: $i) { id url events secret createdAt } }
`);

/** The tenant's webhooks (never their secrets). */
const WEBHOOKS = operation<WebhooksQuery, WebhooksQueryVariables>(/* GraphQL */ `
  query Webhooks { webhooks { id url events createdAt } }
`);

const DELETE_WEBHOOK = operation<DeleteWebhookMutation, DeleteWebhookMutationVariables>(/* GraphQL */ `
  mutation DeleteWebhook($id: ID!) { deleteWebhook(id: $id) }
`);

const WEBHOOK_DELIVERIES = operation<WebhookDeliveriesQuery, WebhookDeliveriesQueryVariables>(/* GraphQL */ `
  query WebhookDeliveries($id: ID!, $n: Int) {
    webhookDeliveries(webhookId: $id, first: $n) {
      edges { node { id event runId status attempts lastStatusCode lastError createdAt nextAttemptAt deliveredAt } }
      pageInfo { hasNextPage }
    }
  }
`);

/** Registers `webhooks create`, `webhooks list`, `webhooks delete` and `webhooks deliveries`. */
export function webhookCommands(program: Command): void {
  const hooks = program.command('webhooks').description("manage the tenant's webhooks: signed POSTs when runs end or pause (admin)");

  // The receiver's URL is an argument: `--url` is every client command's API address.
  withOutput(withConnection(hooks.command('create <url>')))
    .description('create a webhook POSTing to <url> (http or https); its signing secret is printed once (as indented JSON, also without -o json)')
    .addOption(new Option('--event <event...>', 'the events to send (repeatable)').choices(Object.keys(WEBHOOK_EVENTS)).makeOptionMandatory())
    .action(async (url: string, o: ConnectionFlags & { event: string[]; output: OutputFormat }) => {
      const events = o.event.map((e) => WEBHOOK_EVENTS[e]!);
      const r = await withClient(o, (c) => c.request(CREATE_WEBHOOK, { i: { url, events } }));
      process.stderr.write('Store the secret now: it cannot be shown again.\n');
      process.stdout.write(formatData(o.output === 'yaml' ? 'yaml' : 'json', { ...r.createWebhook, events: r.createWebhook.events.map(eventName) }));
    });

  withOutput(withConnection(hooks.command('list')))
    .description("list the tenant's webhooks (never their secrets)")
    .action(async (o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(WEBHOOKS));
      const rows = r.webhooks.map((w) => [w.id, cell(w.url), w.events.map(eventName).join(','), when(w.createdAt)]);
      printAs(o.output, r.webhooks, () => table(['ID', 'URL', 'EVENTS', 'CREATED'], rows));
    });

  withOutput(withConnection(hooks.command('delete <id>')))
    .description('delete a webhook and its deliveries: nothing more is sent to it')
    .action(async (id: string, o: ConnectionFlags & { output: OutputFormat }) => {
      await withClient(o, (c) => c.request(DELETE_WEBHOOK, { id }));
      printAs(o.output, { id, deleted: true }, () => `webhook ${id} deleted\n`);
    });

  withOutput(withConnection(hooks.command('deliveries <id>')))
    .description("a webhook's deliveries, newest first: each event sent, its attempts and what the receiver answered")
    .option('--limit <n>', 'how many to show (at most 1000)', positiveInt('--limit'), 20)
    .action(async (id: string, o: ConnectionFlags & { limit: number; output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(WEBHOOK_DELIVERIES, { id, n: Math.min(o.limit, 1000) }));
      const nodes = r.webhookDeliveries.edges.map((e) => e.node);
      const rows = nodes.map((d) => [
        d.id,
        eventName(d.event),
        d.runId,
        d.status,
        String(d.attempts),
        cell(d.lastStatusCode),
        cell(d.lastError),
        when(d.createdAt),
      ]);
      printAs(o.output, nodes, () => table(['ID', 'EVENT', 'RUN', 'STATUS', 'ATTEMPTS', 'LAST STATUS', 'LAST ERROR', 'CREATED'], rows));
    });
}
