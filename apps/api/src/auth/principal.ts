/** The role an API key carries. */
export type Role = 'admin' | 'operator' | 'viewer';

/** Who is calling: the tenant and key resolved from `Authorization: Bearer <key>`. */
export interface Principal {
  tenantId: string;
  keyId: string;
  role: Role;
}

/**
 * What a caller may do; each role includes the ones below it:
 * - `read`: every query and subscription except `apiKeys` (viewer, operator, admin);
 * - `operate`: start, signal, cancel and retry runs (operator, admin);
 * - `administer`: publish definitions, manage versions (default, deprecation) and API keys (admin).
 */
export type Permission = 'read' | 'operate' | 'administer';

const GRANTS: Record<Role, readonly Permission[]> = {
  viewer: ['read'],
  operator: ['read', 'operate'],
  admin: ['read', 'operate', 'administer'],
};

/** True when `role` grants `permission`; false for a role that is not one of {@link Role}. */
export function roleAllows(role: Role, permission: Permission): boolean {
  return GRANTS[role]?.includes(permission) ?? false;
}

/** The roles that grant `permission`, weakest first (`['operator', 'admin']` for `operate`). */
export function rolesAllowed(permission: Permission): Role[] {
  return (['viewer', 'operator', 'admin'] as const).filter((r) => GRANTS[r].includes(permission));
}
