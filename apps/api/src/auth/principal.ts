/** The role an API key carries (DESIGN §5). */
export type Role = 'admin' | 'operator' | 'viewer';

/** Who is calling: the tenant and key resolved from `Authorization: Bearer <key>`. */
export interface Principal {
  tenantId: string;
  keyId: string;
  role: Role;
}

/** What a caller may do; each role includes the ones below it. */
export type Permission = 'read' | 'operate' | 'administer';

const GRANTS: Record<Role, readonly Permission[]> = {
  viewer: ['read'],
  operator: ['read', 'operate'],
  admin: ['read', 'operate', 'administer'],
};

export function roleAllows(role: Role, permission: Permission): boolean {
  return GRANTS[role]?.includes(permission) ?? false;
}
