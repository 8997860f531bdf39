import type { ApiKeysQuery, CreateApiKeyMutation } from '../../api/generated/graphql.js';

/** The keys page's GraphQL documents and the shapes of their answers (generated from them). */

export type ApiKeyRow = ApiKeysQuery['apiKeys'][number];
export type CreatedKey = CreateApiKeyMutation['createApiKey'];

export const API_KEYS = /* GraphQL */ `
  query ApiKeys {
    apiKeys { id name keyPrefix role createdAt revokedAt }
  }
`;

export const CREATE_API_KEY = /* GraphQL */ `
  mutation CreateApiKey($input: CreateApiKeyInput!) {
    createApiKey(input: $input) { id name keyPrefix role createdAt secret }
  }
`;

export const REVOKE_API_KEY = /* GraphQL */ `
  mutation RevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) { id name keyPrefix role createdAt revokedAt }
  }
`;
