import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { TenantRepository, WorkflowRepository, type Json } from '@weft/persistence';
import type { WorkflowDefinition, WorkflowEdge, WorkflowNode } from '../../libs/engine/src/model/workflow-definition.js';
import type { JsonValue } from '../../libs/engine/src/model/workflow-types.js';
import type { RunUpdate, RunUpdatePublisher, TaskDispatcher, TaskJob } from '@weft/engine';

const tenantNames = new Map<string, number>();

/**
 * `name` the first time this test file asks for it, then `name-2`, `name-3`…: tenant names are
 * unique in a database, and tests create several tenants of one name (`acme` and its neighbour).
 */
export function uniqueTenantName(name: string): string {
  const n = (tenantNames.get(name) ?? 0) + 1;
  tenantNames.set(name, n);
  return n === 1 ? name : `${name}-${n}`;
}

/** Creates a tenant with an admin key, named `name` or, when taken, see {@link uniqueTenantName}; returns `{tenantId, apiKey}`. */
export async function createTenant(ds: DataSource, name = 'acme'): Promise<{ tenantId: string; apiKey: string }> {
  const t = await new TenantRepository(ds).createTenant(uniqueTenantName(name));
  return { tenantId: t.tenantId, apiKey: t.apiKey };
}

let workflowSeq = 0;

/**
 * Publishes `definition` for the tenant (JSON source, sha256 checksum) and returns the workflow
 * id (default `wf-<n>`) and the new version.
 */
export async function publishWorkflow(
  ds: DataSource,
  tenantId: string,
  definition: WorkflowDefinition,
  opts: { workflowId?: string; name?: string } = {},
): Promise<{ workflowId: string; version: number }> {
  const workflowId = opts.workflowId ?? `wf-${++workflowSeq}`;
  const source = JSON.stringify(definition);
  const { version } = await new WorkflowRepository(ds).publishVersion(tenantId, {
    workflowId,
    name: opts.name,
    definition: definition as unknown as Json,
    source,
    checksum: createHash('sha256').update(source).digest('hex'),
  });
  return { workflowId, version };
}

/** A definition from nodes and edges (and an optional run output template). */
export function def(nodes: WorkflowNode[], edges: WorkflowEdge[] = [], output?: JsonValue): WorkflowDefinition {
  return output === undefined ? { nodes, edges } : { nodes, edges, output };
}

/** An HTTP node (spec default `{url: "http://example.test/<id>"}`), with optional extra fields. */
export function http(id: string, spec: JsonValue = { url: `http://example.test/${id}` }, extra: Partial<WorkflowNode> = {}): WorkflowNode {
  return { node_id: id, type: 'HTTP', spec, ...extra };
}

/** A CODE node on `runtime` (default js). */
export function code(id: string, runtime = 'js', extra: Partial<WorkflowNode> = {}): WorkflowNode {
  return { node_id: id, type: 'CODE', runtime, spec: { code: 'function handler(i) { return i }' }, ...extra };
}

export const fork = (id: string): WorkflowNode => ({ node_id: id, type: 'FORK' });
export const join = (id: string, spec?: JsonValue): WorkflowNode => (spec === undefined ? { node_id: id, type: 'JOIN' } : { node_id: id, type: 'JOIN', spec });
export const sw = (id: string): WorkflowNode => ({ node_id: id, type: 'SWITCH' });
export const wait = (id: string, seconds: number): WorkflowNode => ({ node_id: id, type: 'WAIT', spec: { duration_seconds: seconds } });
export const waitFor = (id: string, event: string, timeoutSeconds?: number): WorkflowNode => ({
  node_id: id,
  type: 'WAIT_FOR_EVENT',
  spec: timeoutSeconds === undefined ? { event } : { event, timeout_seconds: timeoutSeconds },
});
export const edge = (from: string, to: string, condition?: string): WorkflowEdge => (condition ? { from, to, condition } : { from, to });

/** A clock tests move by hand: `now()` for the coordinator, `advance(ms)` to let timers come due. */
export class ManualClock {
  private t: number;
  constructor(start: Date | string = '2030-01-01T00:00:00.000Z') {
    this.t = new Date(start).getTime();
  }
  now = (): Date => new Date(this.t);
  advance(ms: number): void {
    this.t += ms;
  }
}

/**
 * A TaskDispatcher that records every enqueued job (our own port, not the database). `failNext`
 * makes the next `enqueue` reject, as when Redis is down.
 */
export class RecordingDispatcher implements TaskDispatcher {
  readonly jobs: TaskJob[] = [];
  /** The task ids of the jobs enqueued ahead of the waiting ones. */
  readonly ahead: string[] = [];
  calls = 0;
  failNext = 0;
  async enqueue(jobs: TaskJob[], _now?: Date, opts: { ahead?: boolean } = {}): Promise<void> {
    this.calls++;
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('redis unavailable');
    }
    this.jobs.push(...jobs);
    if (opts.ahead) this.ahead.push(...jobs.map((j) => j.taskId));
  }
  /** Jobs for `nodeId`, in enqueue order. */
  forNode(nodeId: string): TaskJob[] {
    return this.jobs.filter((j) => j.nodeId === nodeId);
  }
  /** The last job of `nodeId`; throws when there is none. */
  last(nodeId: string): TaskJob {
    const js = this.forNode(nodeId);
    if (!js.length) throw new Error(`no job for node ${nodeId}; have ${this.jobs.map((j) => j.nodeId).join(', ')}`);
    return js[js.length - 1]!;
  }
}

/** A RunUpdatePublisher that records every update. */
export class RecordingPublisher implements RunUpdatePublisher {
  readonly updates: RunUpdate[] = [];
  async publish(update: RunUpdate): Promise<void> {
    this.updates.push(update);
  }
}

/** A logger that keeps messages (so expected warnings do not clutter the output). */
export class MemoryLogger {
  readonly warnings: string[] = [];
  readonly errors: string[] = [];
  warn = (m: string): void => void this.warnings.push(m);
  error = (m: string): void => void this.errors.push(m);
}
