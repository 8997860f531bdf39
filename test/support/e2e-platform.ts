import type { LoggerService } from '@nestjs/common';
import { TenantRepository } from '@weft/persistence';
import { loadConfig, type WeftConfig } from '@weft/platform';
import { WeftApiError, WeftClient } from '@weft/client';
import { startPlatform, type RunningPlatform } from '@weft/cli';
import { startOrderService } from '../../examples/demo/order-service.js';
import { createTestDatabase } from './test-database.js';
import { uniqueTenantName } from './builders.js';

export const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

/** Fields the suites read from a run. */
export const RUN_FIELDS = `id status workflowId version input config output error createdAt finishedAt
  tasks { id nodeId status attempt input output error branches wakeAt awaitedSignal iteration }`;

/**
 * A whole Weft in this process for an end-to-end suite: its own database cloned from the
 * migrated template, the API on a free port, a worker for every queue, the scheduler polling
 * every 50 ms, and the demo order service on loopback. `tenant()` creates a tenant and returns
 * a client holding its admin key. `opts.logger` receives the platform's log records (e.g. a
 * WeftLogger writing to an array, to read what the processes logged).
 */
export async function startE2E(env: Record<string, string | number> = {}, opts: { logger?: LoggerService } = {}) {
  const db = await createTestDatabase();
  const shop = await startOrderService();
  const config = testConfig(db, { WEFT_WS_KEY_RECHECK_MS: 200, ...env });
  const platform: RunningPlatform = await startPlatform(config, { api: true, worker: true, scheduler: true, host: '127.0.0.1' }, { logger: opts.logger });
  const url = platform.url!;
  const clients: WeftClient[] = [];

  return {
    url,
    /** The Nest application of the platform, to read its services' state. */
    app: platform.app,
    /** The ops listener (`/metrics`, `/readyz`, `/healthz`) when `env` gives WEFT_METRICS_PORT. */
    metricsUrl: platform.metricsUrl,
    shop,
    /** The test database's owner connection (no row-level security), to set up rows no API writes. */
    owner: db.owner,
    /** The test database's runtime and owner URLs, for the `weft admin` commands. */
    dbUrl: db.url,
    dbOwnerUrl: db.ownerUrl,
    /** Creates a tenant named `name` (`name-2`… when taken: {@link uniqueTenantName}); returns its id and a client with its admin key. */
    async tenant(name = 'e2e') {
      const t = await new TenantRepository(db.ds).createTenant(uniqueTenantName(name));
      const client = new WeftClient(url, t.apiKey);
      clients.push(client);
      return { tenantId: t.tenantId, apiKey: t.apiKey, client };
    },
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await platform.close();
      shop.server.close();
      await db.drop();
    },
  };
}

export type E2E = Awaited<ReturnType<typeof startE2E>>;

/**
 * The configuration every in-process platform of the suites runs with: the test database (the
 * runtime role, and its owner for migrations), a free port, private HTTP allowed (the stubs are
 * on loopback), a 50 ms scheduler, quiet logs, 16 jobs per queue; `env` adds or overrides.
 */
export function testConfig(db: { url: string; ownerUrl: string }, env: Record<string, string | number> = {}): WeftConfig {
  return loadConfig(
    {},
    {
      DATABASE_URL: db.url,
      DATABASE_OWNER_URL: db.ownerUrl,
      PORT: 0,
      WEFT_HTTP_ALLOW_PRIVATE: 'true',
      WEFT_SCHEDULER_INTERVAL_MS: 50,
      WEFT_LOG_LEVEL: 'error',
      WEFT_WORKER_CONCURRENCY: 16,
      ...env,
    },
  );
}

/** Publishes a definition (object → JSON, string as is); returns the version. */
export async function publish(client: WeftClient, workflowId: string, definition: unknown): Promise<number> {
  const r = await client.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
    i: { workflowId, definition: typeof definition === 'string' ? definition : JSON.stringify(definition) },
  });
  return r.publishWorkflow.version;
}

/** Starts a run; returns its id. */
export async function start(client: WeftClient, workflowId: string, input: unknown = {}, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await client.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, { i: { workflowId, input, ...extra } });
  return r.startRun.id;
}

/** Reads a run's `fields` (default RUN_FIELDS). */
export async function getRun(client: WeftClient, id: string, fields = RUN_FIELDS): Promise<any> {
  return (await client.request(`query($id: ID!) { run(id: $id) { ${fields} } }`, { id })).run;
}

/** Polls the run's `fields` until `pred(run)` holds (default: the run ended), up to `timeoutMs`; returns the run. */
export async function waitRun(
  client: WeftClient,
  id: string,
  pred: (run: any) => boolean = (r) => TERMINAL.includes(r.status),
  timeoutMs = 50_000,
  fields = RUN_FIELDS,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await getRun(client, id, fields);
    if (pred(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${id} did not reach the expected state in ${timeoutMs} ms: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The task of `nodeId` in a run read with RUN_FIELDS (for a for_each node, its own task, not an iteration). */
export function task(run: any, nodeId: string): any {
  return run.tasks.find((t: any) => t.nodeId === nodeId && t.iteration == null);
}

/** A for_each node's iteration tasks in a run read with `iteration`, by element index. */
export function iterations(run: any, nodeId: string): any[] {
  return run.tasks.filter((t: any) => t.nodeId === nodeId && t.iteration != null).sort((a: any, b: any) => a.iteration - b.iteration);
}

/** `{nodeId: status}` of a run's nodes (for_each iterations left out). */
export function statuses(run: any): Record<string, string> {
  return Object.fromEntries(run.tasks.filter((t: any) => t.iteration == null).map((t: any) => [t.nodeId, t.status]));
}

/** A CODE node in JavaScript whose handler body is `body`; `extra` joins its spec. */
export function jsNode(id: string, body: string, extra: Record<string, unknown> = {}) {
  return { node_id: id, type: 'CODE', runtime: 'js', spec: { code: `function handler(input) { ${body} }`, ...extra } };
}

/** The API error `p` rejects with; fails when it resolves or rejects with anything else. */
export async function rejection(p: Promise<unknown>): Promise<WeftApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof WeftApiError) return e;
    throw e;
  }
  throw new Error('expected the API to answer with an error');
}
