import type { CreateRunBatchMutation, RunBatchFieldsFragment, RunBatchQuery, RunBatchesQuery } from '../../api/generated/graphql.js';

/** How many runs `filter` matches now: what a bulk action over it would act on. */
export const COUNT_RUNS = /* GraphQL */ `
  query CountRuns($filter: RunFilter) {
    countRuns(filter: $filter)
  }
`;

/** A batch's progress, as the batch page and the list of batches show it. */
const RUN_BATCH_FIELDS = /* GraphQL */ `
  fragment RunBatchFields on RunBatch {
    id action status total applied skipped failed reason fromNodeId filter createdAt finishedAt
  }
`;

export const CREATE_RUN_BATCH = /* GraphQL */ `
  mutation CreateRunBatch($input: CreateRunBatchInput!) {
    createRunBatch(input: $input) { ...RunBatchFields }
  }
  ${RUN_BATCH_FIELDS}
`;

/** A batch with one page of its runs' outcomes (`$after`: the cursor of the page before). */
export const RUN_BATCH = /* GraphQL */ `
  query RunBatch($id: ID!, $first: Int!, $after: String) {
    runBatch(id: $id) {
      ...RunBatchFields
      items(first: $first, after: $after) {
        edges { cursor node { runId outcome error } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
  ${RUN_BATCH_FIELDS}
`;

export const STOP_RUN_BATCH = /* GraphQL */ `
  mutation StopRunBatch($id: ID!) {
    stopRunBatch(id: $id) { ...RunBatchFields }
  }
  ${RUN_BATCH_FIELDS}
`;

/** The tenant's batches, newest first. */
export const RUN_BATCHES = /* GraphQL */ `
  query RunBatches($first: Int!, $after: String) {
    runBatches(first: $first, after: $after) {
      edges { cursor node { ...RunBatchFields } }
      pageInfo { hasNextPage endCursor }
    }
  }
  ${RUN_BATCH_FIELDS}
`;

/** A bulk action's progress and what it was asked to do. */
export type RunBatch = RunBatchFieldsFragment;
export type RunBatchAction = RunBatch['action'];
export type CreatedRunBatch = CreateRunBatchMutation['createRunBatch'];
/** A batch with one page of its items. */
export type RunBatchWithItems = RunBatchQuery['runBatch'];
export type RunBatchItem = RunBatchWithItems['items']['edges'][number]['node'];
export type RunBatchesPage = RunBatchesQuery['runBatches'];
