/** The start-run page's GraphQL document. */

export const START_RUN = /* GraphQL */ `
  mutation StartRun($input: StartRunInput!) {
    startRun(input: $input) { id }
  }
`;

/** The fields of the start-run form the API's problem paths can name. */
export const START_FIELDS = ['workflowId', 'version', 'input', 'config', 'idempotencyKey'] as const;
export type StartField = (typeof START_FIELDS)[number];
