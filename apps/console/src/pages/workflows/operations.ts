import { GRAPH_FIELDS } from '../../api/graph.js';
import type { PublishWorkflowMutation, VersionTextQuery, WorkflowFieldsFragment, WorkflowQuery, WorkflowVersionQuery } from '../../api/generated/graphql.js';

/** The workflow pages' GraphQL documents and the shapes of their answers (generated from them). */

export type WorkflowSummary = WorkflowFieldsFragment;
export type WorkflowWithVersions = NonNullable<WorkflowQuery['workflow']>;
export type VersionSummary = WorkflowWithVersions['versions'][number];
export type VersionDetail = NonNullable<WorkflowVersionQuery['workflowVersion']>;
export type VersionProblem = VersionDetail['warnings'][number];

const WORKFLOW_FIELDS = /* GraphQL */ `
  fragment WorkflowFields on Workflow { id name latestVersion defaultVersion pinnedVersion createdAt updatedAt }
`;
const VERSION_FIELDS = /* GraphQL */ `
  fragment VersionFields on WorkflowVersion { version createdAt createdBy checksum deprecated deprecatedAt }
`;

export const WORKFLOWS = /* GraphQL */ `
  query Workflows {
    workflows { ...WorkflowFields }
  }
  ${WORKFLOW_FIELDS}
`;

export const WORKFLOW = /* GraphQL */ `
  query Workflow($workflowId: String!) {
    workflow(workflowId: $workflowId) { ...WorkflowFields versions { ...VersionFields } }
  }
  ${WORKFLOW_FIELDS}
  ${VERSION_FIELDS}
`;

export const WORKFLOW_VERSION = /* GraphQL */ `
  query WorkflowVersion($workflowId: String!, $version: Int) {
    workflowVersion(workflowId: $workflowId, version: $version) {
      workflowId ...VersionFields source warnings { message nodeId path } graph { ...GraphFields }
    }
  }
  ${VERSION_FIELDS}
  ${GRAPH_FIELDS}
`;

export const SET_DEFAULT_VERSION = /* GraphQL */ `
  mutation SetDefaultVersion($workflowId: String!, $version: Int) {
    setDefaultVersion(workflowId: $workflowId, version: $version) { ...WorkflowFields }
  }
  ${WORKFLOW_FIELDS}
`;

export const DEPRECATE_VERSION = /* GraphQL */ `
  mutation DeprecateVersion($workflowId: String!, $version: Int!, $deprecated: Boolean!) {
    deprecateVersion(workflowId: $workflowId, version: $version, deprecated: $deprecated) { workflowId ...VersionFields }
  }
  ${VERSION_FIELDS}
`;

/** A version as publishWorkflow answers it. */
export type PublishedVersion = PublishWorkflowMutation['publishWorkflow'];

export const PUBLISH_WORKFLOW = /* GraphQL */ `
  mutation PublishWorkflow($input: PublishWorkflowInput!) {
    publishWorkflow(input: $input) { workflowId version warnings { message nodeId path } }
  }
`;

/** A version's text as published and its definition as stored (JSON), for the editor and the diff. */
export type VersionText = NonNullable<VersionTextQuery['workflowVersion']>;

export const VERSION_TEXT = /* GraphQL */ `
  query VersionText($workflowId: String!, $version: Int) {
    workflowVersion(workflowId: $workflowId, version: $version) { workflowId version source definition }
  }
`;
