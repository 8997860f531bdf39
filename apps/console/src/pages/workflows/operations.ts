import { GRAPH_FIELDS, type Graph } from '../../api/graph.js';

/** The workflow pages' GraphQL documents and the shapes of their answers. */

export interface WorkflowSummary {
  id: string;
  name: string | null;
  latestVersion: number;
  defaultVersion: number;
  pinnedVersion: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface VersionSummary {
  version: number;
  createdAt: string;
  createdBy: string | null;
  checksum: string;
  deprecated: boolean;
  deprecatedAt: string | null;
}

export interface WorkflowWithVersions extends WorkflowSummary {
  versions: VersionSummary[];
}

export interface VersionProblem {
  message: string;
  nodeId: string | null;
  path: string | null;
}

export interface VersionDetail extends VersionSummary {
  workflowId: string;
  source: string;
  warnings: VersionProblem[];
  graph: Graph;
}

const WORKFLOW_FIELDS = 'id name latestVersion defaultVersion pinnedVersion createdAt updatedAt';
const VERSION_FIELDS = 'version createdAt createdBy checksum deprecated deprecatedAt';

export const WORKFLOWS = /* GraphQL */ `
  query Workflows {
    workflows { ${WORKFLOW_FIELDS} }
  }
`;

export const WORKFLOW = /* GraphQL */ `
  query Workflow($workflowId: String!) {
    workflow(workflowId: $workflowId) { ${WORKFLOW_FIELDS} versions { ${VERSION_FIELDS} } }
  }
`;

export const WORKFLOW_VERSION = /* GraphQL */ `
  query WorkflowVersion($workflowId: String!, $version: Int) {
    workflowVersion(workflowId: $workflowId, version: $version) {
      workflowId ${VERSION_FIELDS} source warnings { message nodeId path } graph { ${GRAPH_FIELDS} }
    }
  }
`;

export const SET_DEFAULT_VERSION = /* GraphQL */ `
  mutation SetDefaultVersion($workflowId: String!, $version: Int) {
    setDefaultVersion(workflowId: $workflowId, version: $version) { ${WORKFLOW_FIELDS} }
  }
`;

export const DEPRECATE_VERSION = /* GraphQL */ `
  mutation DeprecateVersion($workflowId: String!, $version: Int!, $deprecated: Boolean!) {
    deprecateVersion(workflowId: $workflowId, version: $version, deprecated: $deprecated) { workflowId ${VERSION_FIELDS} }
  }
`;

/** A version as publishWorkflow answers it. */
export interface PublishedVersion {
  workflowId: string;
  version: number;
  warnings: VersionProblem[];
}

export const PUBLISH_WORKFLOW = /* GraphQL */ `
  mutation PublishWorkflow($input: PublishWorkflowInput!) {
    publishWorkflow(input: $input) { workflowId version warnings { message nodeId path } }
  }
`;

/** A version's text as published and its definition as stored (JSON), for the editor and the diff. */
export interface VersionText {
  version: number;
  source: string;
  definition: unknown;
}

export const VERSION_TEXT = /* GraphQL */ `
  query VersionText($workflowId: String!, $version: Int) {
    workflowVersion(workflowId: $workflowId, version: $version) { workflowId version source definition }
  }
`;
