import type { GraphFieldsFragment } from './generated/graphql.js';

/** A DAG as the API draws it (`Run.graph`, `WorkflowVersion.graph`); the schema describes each field. */
export type Graph = GraphFieldsFragment;
export type GraphNode = Graph['nodes'][number];
export type GraphEdge = Graph['edges'][number];

/** The selection set of a Graph, for queries and subscriptions: spread `...GraphFields` and append this. */
export const GRAPH_FIELDS = /* GraphQL */ `
  fragment GraphFields on Graph {
    nodes { id type status forEach iterations { status count } childWorkflow loop maxIterations loopIteration }
    edges { from to label onError state }
  }
`;
