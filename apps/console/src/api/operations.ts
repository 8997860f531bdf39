/** The caller: the key the console signed in with, its tenant and role. */
export const WHOAMI = /* GraphQL */ `
  query Whoami {
    whoami { tenantId keyId keyName role }
  }
`;
