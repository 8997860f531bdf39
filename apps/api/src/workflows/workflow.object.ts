import { Field, Int, ObjectType } from '@nestjs/graphql';
import type { JsonValue, Problem } from '@weft/engine';
import type { WorkflowVersionInfo } from '@weft/persistence';
import { GraphQLDateTime } from '../common/date-time.scalar.js';
import { GraphQLJSON } from '../common/json.scalar.js';

@ObjectType('Workflow', { description: 'A workflow and its versions; versions are loaded when asked for.' })
export class WorkflowObject {
  /** The owning tenant: the versions field resolver loads with it. Not exposed. */
  tenantId: string;

  /** Loads the versions of every workflow of the same list at once (set by the list). Not exposed. */
  pageVersions?: () => Promise<Map<string, WorkflowVersionInfo[]>>;

  @Field(() => String)
  id: string;

  @Field(() => String, { nullable: true })
  name: string | null;

  @Field(() => Int, { description: 'The newest published version (versions count from 1).' })
  latestVersion: number;

  @Field(() => Int, { description: 'The version startRun uses when none is given: pinnedVersion, else latestVersion.' })
  defaultVersion: number;

  @Field(() => Int, { nullable: true, description: 'The version an admin pinned with setDefaultVersion; null when the default follows the latest.' })
  pinnedVersion: number | null;

  @Field(() => GraphQLDateTime)
  createdAt: Date;

  @Field(() => GraphQLDateTime)
  updatedAt: Date;
}

@ObjectType('WorkflowVersion')
export class WorkflowVersionObject {
  /** The owning tenant: definition and source are loaded with it when absent. Not exposed. */
  tenantId: string;

  /** Bytes of the stored definition and source, to charge before they are read (absent: counted from the values). Not exposed. */
  definitionBytes?: number;
  sourceBytes?: number;

  /** The warnings publishWorkflow found for it; absent otherwise, when the field resolver reads them. Exposed as `warnings`. */
  warnings?: Problem[];

  @Field(() => String)
  workflowId: string;

  @Field(() => Int)
  version: number;

  /** Absent when the version was listed without its body: the field resolver loads it. */
  @Field(() => GraphQLJSON, { description: 'The parsed definition (nodes, edges, output).' })
  definition?: JsonValue;

  @Field(() => String, { description: 'sha256 of the canonical JSON of the definition.' })
  checksum: string;

  @Field(() => GraphQLDateTime)
  createdAt: Date;

  /** Absent when the version was listed without its body: the field resolver loads it. */
  @Field(() => String, { description: 'The text as published (YAML or JSON).' })
  source?: string;

  @Field(() => String, { nullable: true, description: 'Name of the API key that published the version (null when unknown).' })
  createdBy: string | null;

  @Field(() => Boolean, { description: 'True once an admin deprecated the version: new runs on it are refused, running ones continue.' })
  deprecated: boolean;

  @Field(() => GraphQLDateTime, { nullable: true })
  deprecatedAt: Date | null;
}
