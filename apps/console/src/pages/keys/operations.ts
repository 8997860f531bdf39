import type { Role } from '../../session/session.js';

/** The keys page's GraphQL documents and the shapes of their answers. */

export interface ApiKeyRow {
  id: string;
  name: string;
  keyPrefix: string;
  role: Role;
  createdAt: string;
  revokedAt: string | null;
}

export interface CreatedKey extends Omit<ApiKeyRow, 'revokedAt'> {
  secret: string;
}

const KEY_FIELDS = 'id name keyPrefix role createdAt';

export const API_KEYS = /* GraphQL */ `
  query ApiKeys {
    apiKeys { ${KEY_FIELDS} revokedAt }
  }
`;

export const CREATE_API_KEY = /* GraphQL */ `
  mutation CreateApiKey($input: CreateApiKeyInput!) {
    createApiKey(input: $input) { ${KEY_FIELDS} secret }
  }
`;

export const REVOKE_API_KEY = /* GraphQL */ `
  mutation RevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) { ${KEY_FIELDS} revokedAt }
  }
`;
