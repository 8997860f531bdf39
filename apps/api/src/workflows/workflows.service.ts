import { Injectable } from '@nestjs/common';
import { DagCache, loadDefinition, WeftError, type JsonValue, type WorkflowDefinition } from '@weft/engine';
import { WorkflowRepository, type WorkflowVersionEntity } from '@weft/persistence';
import type { Principal } from '../auth/principal.js';
import { toMermaid } from '../common/mermaid.js';
import { unstorableJson } from '../common/storable.js';
import { definitionChecksum } from './canonical-json.js';
import type { PublishWorkflowInput } from './publish-workflow.input.js';
import type { WorkflowObject, WorkflowVersionObject } from './workflow.object.js';

/** Publishing and reading workflow definitions; versions are immutable, so they are cached. */
@Injectable()
export class WorkflowsService {
  /** Versions are immutable: the coordinator's LRU of built DAGs serves their definitions too. */
  private readonly dags = new DagCache(500);

  constructor(private readonly workflows: WorkflowRepository) {}

  /**
   * Validates the YAML/JSON text (WeftError BAD_USER_INPUT listing every problem) and stores it
   * as the next version, with the sha256 of its canonical JSON. The text was checked by the
   * validation pipe; escapes in it (`"\u0000"`, YAML `"\0"`) may still parse to strings
   * PostgreSQL cannot store, refused here at `definition.$.<path>`.
   */
  async publish(p: Principal, input: PublishWorkflowInput): Promise<WorkflowVersionObject> {
    const definition = loadDefinition(input.definition);
    const json = definition as unknown as JsonValue;
    const unstorable = unstorableJson(json, 'definition.$');
    if (unstorable.length > 0) throw new WeftError('BAD_USER_INPUT', `${unstorable[0]!.path}: ${unstorable[0]!.message}`, unstorable);
    const checksum = definitionChecksum(json);
    const { version, createdAt } = await this.workflows.publishVersion(p.tenantId, {
      workflowId: input.workflowId,
      name: input.name ?? undefined,
      definition: json,
      source: input.definition,
      checksum,
    });
    return { workflowId: input.workflowId, version, definition: json, checksum, createdAt, source: input.definition };
  }

  async list(p: Principal): Promise<WorkflowObject[]> {
    const all = await this.workflows.list(p.tenantId);
    return all.map((w) => ({
      id: w.workflowId,
      name: w.name,
      latestVersion: w.latestVersion,
      createdAt: w.createdAt,
      updatedAt: w.updatedAt,
    }));
  }

  /** One version (the latest when `version` is omitted); WeftError NOT_FOUND when there is none. */
  async version(p: Principal, workflowId: string, version?: number | null): Promise<WorkflowVersionObject> {
    const v = await this.workflows.getVersion(p.tenantId, workflowId, version ?? undefined);
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

  mermaid(v: WorkflowVersionObject): string {
    return toMermaid(v.definition as unknown as WorkflowDefinition);
  }
}

function toVersionObject(v: WorkflowVersionEntity): WorkflowVersionObject {
  return {
    workflowId: v.workflowId,
    version: v.version,
    definition: v.definition as JsonValue,
    checksum: v.checksum,
    createdAt: v.createdAt,
    source: v.source,
  };
}

function notFound(workflowId: string, version?: number | null): WeftError {
  return new WeftError('NOT_FOUND', version ? `Workflow ${workflowId} has no version ${version}` : `Workflow ${workflowId} not found`);
}
