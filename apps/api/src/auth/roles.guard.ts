import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GqlExecutionContext } from '@nestjs/graphql';
import { WeftError } from '@weft/engine';
import { AuthService } from './auth.service.js';
import type { GqlContext } from './gql-context.js';
import { roleAllows, rolesAllowed, type Permission } from './principal.js';

const PERMISSION = 'weft:permission';
const ACTION = 'weft:action';

/**
 * The permission a resolver method needs (methods without one need `read`) and, for the
 * FORBIDDEN message, the action it performs in words (`"manage API keys"`); without one the
 * permission's general description is used.
 */
export const Requires =
  (permission: Permission, action?: string): MethodDecorator =>
  (target, key, descriptor) => {
    SetMetadata(PERMISSION, permission)(target, key, descriptor);
    if (action) SetMetadata(ACTION, action)(target, key, descriptor);
  };

/**
 * A mutation starting this long after its key was last found valid checks the key again (ms):
 * a request carrying many slow mutations cannot keep acting on a key revoked meanwhile.
 * Administrative mutations (keys, versions, definitions) always check it again.
 */
export const MUTATION_KEY_RECHECK_MS = 250;

/**
 * Checks the caller's role against the method's {@link Requires} permission; a role that may not
 * act is WeftError FORBIDDEN naming the role, the action, the field and the roles that may, e.g.
 * `The operator role may not manage API keys: createApiKey needs the admin role`. The principal
 * is always set by the context factory (HTTP) or onConnect (graphql-ws); its absence is treated
 * as unauthenticated rather than trusted. Before a mutation runs, the key is checked again when
 * {@link MUTATION_KEY_RECHECK_MS} passed since it was last found valid (always for `administer`):
 * a key revoked meanwhile is UNAUTHENTICATED.
 */
@Injectable()
export class RolesGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const gql = GqlExecutionContext.create(context);
    const ctx = gql.getContext<GqlContext>();
    const principal = ctx?.principal;
    if (!principal) throw new WeftError('UNAUTHENTICATED', 'Missing API key: send "Authorization: Bearer <key>"');
    const needed = this.reflector.get<Permission | undefined>(PERMISSION, context.getHandler()) ?? 'read';
    const isMutation = gql.getInfo<{ operation?: { operation?: string } }>()?.operation?.operation === 'mutation';
    if (isMutation && (needed === 'administer' || Date.now() - (ctx.authenticatedAt ?? 0) >= MUTATION_KEY_RECHECK_MS)) {
      await recheckKey(this.auth, ctx);
    }
    if (!roleAllows(principal.role, needed)) {
      const action = this.reflector.get<string | undefined>(ACTION, context.getHandler()) ?? DESCRIBE[needed];
      const field = gql.getInfo<{ fieldName?: string }>()?.fieldName ?? context.getHandler().name;
      throw new WeftError('FORBIDDEN', `The ${principal.role} role may not ${action}: ${field} needs the ${rolesAllowed(needed).join(' or ')} role`);
    }
    return true;
  }
}

/** Throws UNAUTHENTICATED unless the context's credentials still name the same, active key. */
async function recheckKey(auth: AuthService, ctx: GqlContext): Promise<void> {
  await auth.reauthenticate(ctx.authorization, ctx.principal);
  ctx.authenticatedAt = Date.now();
}

const DESCRIBE: Record<Permission, string> = {
  read: 'read',
  operate: 'start, signal, cancel or retry runs',
  administer: 'publish workflow definitions, manage versions or manage API keys',
};
