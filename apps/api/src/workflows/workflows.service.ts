import { Inject, Injectable, Optional } from '@nestjs/common';
import { childWorkflowRefs, childWorkflowWarnings, invalidDefinition, WeftError, type JsonValue, type Problem, type WorkflowDefinition } from '@weft/engine';
import { DagCache } from '@weft/engine/coordinator';
import {
  QueueReservationRepository,
  WorkerRegistryRepository,
  WorkflowRepository,
  type WorkflowSummary,
  type WorkflowVersionEntity,
  type WorkflowVersionInfo,
} from '@weft/persistence';
import { WEFT_CONFIG, WeftMetrics, type WeftConfig } from '@weft/platform';
import type { GraphQLResolveInfo } from 'graphql';
import type { Principal } from '../auth/principal.js';
import { toDag, type DagShape } from '../common/graph.js';
import { toMermaid } from '../common/mermaid.js';
import { unstorableJson } from '../common/storable.js';
import { jsonBytes, responseScope, type ResponseBudget } from '../runs/response-budget.js';
import { LiveQueues } from '../queues/live-queues.js';
import { reservedQueueMessage, reservedQueueProblems, unservedQueueWarnings, workerNodeQueues } from '../queues/worker-node-queues.js';
import { DefinitionChecker } from './definition-checker.js';
import type { PublishWorkflowInput } from './publish-workflow.input.js';
import type { WorkflowObject, WorkflowVersionObject } from './workflow.object.js';

/**
 * Publishing, reading and managing workflow definitions. Versions are immutable (only their
 * deprecation changes), so their definitions are cached.
 */
@Injectable()
export class WorkflowsService {
  /** Versions are immutable: the coordinator's LRU of built DAGs serves their definitions too. */
  private readonly dags = new DagCache(500);

  constructor(
    private readonly workflows: WorkflowRepository,
    private readonly reservations: QueueReservationRepository,
    private readonly checker: DefinitionChecker,
    registry: WorkerRegistryRepository,
    @Inject(WEFT_CONFIG) private readonly config: WeftConfig,
    @Optional() private readonly metrics?: WeftMetrics,
  ) {
    this.live = new LiveQueues(registry);
  }

  /** The queues live workers serve, for the warnings about nodes on other queues. */
  private readonly live: LiveQueues;

  /**
   * Validates the YAML/JSON text (WeftError BAD_USER_INPUT listing every problem) and stores it
   * as the next version, with the sha256 of its canonical JSON and the publishing key. A
   * definition over the node or edge limit is refused right after parsing, naming its count and
   * the limit. A definition identical to the latest version's (same checksum) returns that
   * version instead (its stored source text; a new `name` is still applied), answered before
   * validating: that version passed validation when it was published. Large definitions are
   * parsed and validated on the validation thread ({@link DefinitionChecker}). The text was
   * checked by the validation pipe; escapes in it (`"\u0000"`, YAML `"\0"`) may still parse to
   * strings PostgreSQL cannot store, refused here at `definition.$.<path>`. A worker node whose
   * queue is reserved for other tenants is refused too, naming the node and the queue (a node's
   * own `queue`, or its runtime's default queue). The result carries the version's warnings,
   * found after it was stored (a SUBWORKFLOW may call the workflow itself).
   */
  async publish(p: Principal, input: PublishWorkflowInput): Promise<WorkflowVersionObject> {
    const parsed = await this.checker.parse(input.definition, p.tenantId);
    const same = await this.workflows.latestIfIdentical(p.tenantId, { workflowId: input.workflowId, name: input.name ?? undefined, checksum: parsed.checksum });
    if (same) {
      this.metrics?.definitionChecks.inc({ how: 'identical' });
      return { ...toVersionObject(same), warnings: await this.publishWarnings(p.tenantId, same.definition as unknown as WorkflowDefinition) };
    }
    const problems = await this.checker.validate(parsed, input.definition.length, p.tenantId);
    if (problems.length > 0) throw invalidDefinition(problems);
    const definition = parsed.definition;
    const json = definition as unknown as JsonValue;
    const unstorable = unstorableJson(json, 'definition.$');
    if (unstorable.length > 0) throw new WeftError('BAD_USER_INPUT', `${unstorable[0]!.path}: ${unstorable[0]!.message}`, unstorable);
    const nodeQueues = workerNodeQueues(definition);
    const denied = reservedQueueProblems(
      nodeQueues,
      await this.reservations.access(
        p.tenantId,
        nodeQueues.map((n) => n.queue),
      ),
    );
    if (denied.length > 0) throw new WeftError('BAD_USER_INPUT', reservedQueueMessage(nodeQueues, denied), denied);
    const published = await this.workflows.publishVersion(p.tenantId, {
      workflowId: input.workflowId,
      name: input.name ?? undefined,
      definition: json,
      source: input.definition,
      checksum: parsed.checksum,
      createdByKeyId: p.keyId,
    });
    return { ...toVersionObject(published), warnings: await this.publishWarnings(p.tenantId, definition) };
  }

  /** The version's warnings: those publish found, else computed now ({@link publishWarnings}). */
  async warnings(v: WorkflowVersionObject): Promise<Problem[]> {
    return v.warnings ?? this.publishWarnings(v.tenantId, (await this.definitionOf(v)) as unknown as WorkflowDefinition);
  }

  /**
   * What does not refuse `definition` but will hold its runs up, as of now: its SUBWORKFLOW
   * calls of workflows or versions the tenant does not have ({@link childWorkflowWarnings}), then
   * its worker nodes on queues no live worker serves ({@link unservedQueueWarnings}).
   */
  private async publishWarnings(tenantId: string, definition: WorkflowDefinition): Promise<Problem[]> {
    const nodes = workerNodeQueues(definition);
    const [children, served] = await Promise.all([this.childWorkflowWarnings(tenantId, definition), nodes.length ? this.live.served() : new Set<string>()]);
    return [...children, ...unservedQueueWarnings(nodes, served)];
  }

  /**
   * The warnings about the workflows `definition`'s SUBWORKFLOW nodes call, against what the
   * tenant has now: one query for the called workflows' versions when there are calls, and one
   * for the tenant's workflow ids (the suggestions) when a called workflow is missing.
   */
  private async childWorkflowWarnings(tenantId: string, definition: WorkflowDefinition): Promise<Problem[]> {
    const refs = childWorkflowRefs(definition);
    if (refs.length === 0) return [];
    const infos = await this.workflows.versionInfos(
      tenantId,
      refs.map((r) => r.workflow),
    );
    const versions = new Map([...infos].map(([id, list]) => [id, list.map((v) => ({ version: v.version, deprecated: v.deprecatedAt != null }))]));
    const missing = [...versions.values()].some((list) => list.length === 0);
    return childWorkflowWarnings(refs, { ids: missing ? await this.workflows.workflowIds(tenantId) : [], versions });
  }

  /** The tenant's workflows by id; their `versions` are loaded for the whole list in one query. */
  async list(p: Principal): Promise<WorkflowObject[]> {
    const all = await this.workflows.list(p.tenantId);
    let batch: Promise<Map<string, WorkflowVersionInfo[]>> | undefined;
    const pageVersions = () =>
      (batch ??= this.workflows.versionInfos(
        p.tenantId,
        all.map((w) => w.workflowId),
      ));
    return all.map((w) => ({ ...toWorkflowObject(p.tenantId, w), pageVersions }));
  }

  /** One workflow; WeftError NOT_FOUND when the tenant has none of that id. */
  async workflow(p: Principal, workflowId: string): Promise<WorkflowObject> {
    const w = await this.workflows.getWorkflow(p.tenantId, workflowId);
    if (!w) throw notFound(workflowId);
    return toWorkflowObject(p.tenantId, w);
  }

  /** Every version of the workflow, oldest first, without definitions (loaded when asked for). */
  async versions(w: WorkflowObject): Promise<WorkflowVersionObject[]> {
    const infos = w.pageVersions ? (await w.pageVersions()).get(w.id) : (await this.workflows.versionInfos(w.tenantId, [w.id])).get(w.id);
    return (infos ?? []).map(toVersionObject);
  }

  /** One version (the latest when `version` is omitted); WeftError NOT_FOUND when there is none. */
  async version(p: Principal, workflowId: string, version?: number | null): Promise<WorkflowVersionObject> {
    const v = await this.workflows.getVersion(p.tenantId, workflowId, version ?? undefined);
    if (!v) throw notFound(workflowId, version);
    return toVersionObject(v);
  }

  /**
   * Pins `version` as the default of new runs, or with null unpins it (the default follows the
   * latest). Returns the workflow.
   * @throws WeftError NOT_FOUND (unknown workflow or version), BAD_USER_INPUT (the version is
   * deprecated: restore it first or pin another).
   */
  async setDefaultVersion(p: Principal, workflowId: string, version: number | null): Promise<WorkflowObject> {
    const r = await this.workflows.setDefaultVersion(p.tenantId, workflowId, version);
    if (r.ok) return toWorkflowObject(p.tenantId, r.workflow);
    switch (r.reason) {
      case 'NO_WORKFLOW':
        throw notFound(workflowId);
      case 'NO_VERSION':
        throw notFound(workflowId, version);
      case 'DEPRECATED': {
        const message = `workflow ${workflowId} version ${version} is deprecated and cannot be the default; restore it with deprecateVersion(deprecated: false) or pin another version`;
        throw new WeftError('BAD_USER_INPUT', message, [{ path: 'version', message }]);
      }
    }
  }

  /**
   * Deprecates a version (new runs on it are refused; running runs continue) or, with
   * `deprecated: false`, restores it. Returns the version.
   * @throws WeftError NOT_FOUND (unknown workflow or version).
   */
  async deprecateVersion(p: Principal, workflowId: string, version: number, deprecated: boolean): Promise<WorkflowVersionObject> {
    const v = await this.workflows.setDeprecated(p.tenantId, workflowId, version, deprecated);
    if (!v) throw notFound(workflowId, version);
    return toVersionObject(v);
  }

  /** The definition of a version, from the cache or the database; NOT_FOUND when it is gone. */
  async definition(tenantId: string, workflowId: string, version: number): Promise<WorkflowDefinition> {
    const dag = await this.dags.get(tenantId, workflowId, version, async () => {
      const v = await this.workflows.getVersion(tenantId, workflowId, version);
      return v ? (v.definition as unknown as WorkflowDefinition) : undefined;
    });
    if (!dag) throw notFound(workflowId, version);
    return dag.definition;
  }

  /** The version's definition: the one it carries, else loaded (a version listed without it). */
  async definitionOf(v: WorkflowVersionObject): Promise<JsonValue> {
    return v.definition ?? ((await this.definition(v.tenantId, v.workflowId, v.version)) as unknown as JsonValue);
  }

  /**
   * The version's definition for the answer `info` belongs to: its size charged to the answer's
   * budget (WEFT_MAX_RESPONSE_BYTES) first, and for a version listed without it, read only once
   * every size of the answer is charged ({@link ResponseBudget.charged}).
   * @throws ResponseTooLargeError when the answer passes its budget
   */
  async chargedDefinition(context: object, info: GraphQLResolveInfo, v: WorkflowVersionObject): Promise<JsonValue> {
    const budget = this.budget(context, info);
    budget.charge(v.definitionBytes ?? jsonBytes(v.definition));
    if (v.definition === undefined) await budget.charged();
    return this.definitionOf(v);
  }

  /** {@link chargedDefinition} for the source text. */
  async chargedSource(context: object, info: GraphQLResolveInfo, v: WorkflowVersionObject): Promise<string> {
    const budget = this.budget(context, info);
    budget.charge(v.sourceBytes ?? Buffer.byteLength(v.source ?? ''));
    if (v.source === undefined) await budget.charged();
    return this.sourceOf(v);
  }

  /** `read`, a read of versions whose sizes the answer `info` belongs to charges ({@link ResponseBudget.sizing}). */
  sizing<T>(context: object, info: GraphQLResolveInfo, read: Promise<T>): Promise<T> {
    return this.budget(context, info).sizing(read);
  }

  private budget(context: object, info: GraphQLResolveInfo): ResponseBudget {
    return responseScope(context, info, this.config.maxResponseBytes).budget;
  }

  /** The version's source text: the one it carries, else loaded (a version listed without it). */
  async sourceOf(v: WorkflowVersionObject): Promise<string> {
    if (v.source !== undefined) return v.source;
    const full = await this.workflows.getVersion(v.tenantId, v.workflowId, v.version);
    if (!full) throw notFound(v.workflowId, v.version);
    return full.source;
  }

  async mermaid(v: WorkflowVersionObject): Promise<string> {
    return toMermaid((await this.definitionOf(v)) as unknown as WorkflowDefinition);
  }

  /** The version's DAG as data: every node unreached, every edge OPEN. */
  async graph(v: WorkflowVersionObject): Promise<DagShape> {
    return toDag((await this.definitionOf(v)) as unknown as WorkflowDefinition);
  }
}

function toWorkflowObject(tenantId: string, w: WorkflowSummary): WorkflowObject {
  return {
    tenantId,
    id: w.workflowId,
    name: w.name,
    latestVersion: w.latestVersion,
    defaultVersion: w.defaultVersion,
    pinnedVersion: w.pinnedVersion,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}

function toVersionObject(v: WorkflowVersionInfo | WorkflowVersionEntity): WorkflowVersionObject {
  const body = 'definition' in v ? { definition: v.definition as JsonValue, source: v.source } : {};
  const bytes = 'definitionBytes' in v ? { definitionBytes: v.definitionBytes, sourceBytes: v.sourceBytes } : {};
  return {
    tenantId: v.tenantId,
    workflowId: v.workflowId,
    version: v.version,
    checksum: v.checksum,
    createdAt: v.createdAt,
    createdBy: v.createdBy ?? null,
    deprecated: v.deprecatedAt != null,
    deprecatedAt: v.deprecatedAt ?? null,
    ...body,
    ...bytes,
  };
}

function notFound(workflowId: string, version?: number | null): WeftError {
  return new WeftError(
    'NOT_FOUND',
    version !== undefined && version !== null ? `Workflow ${workflowId} has no version ${version}` : `Workflow ${workflowId} not found`,
  );
}
