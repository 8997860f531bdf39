import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GqlExecutionContext } from '@nestjs/graphql';
import { WeftError } from '@weft/engine';
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
 * Checks the caller's role against the method's {@link Requires} permission; a role that may not
 * act is WeftError FORBIDDEN naming the role, the action, the field and the roles that may, e.g.
 * `The operator role may not manage API keys: createApiKey needs the admin role`. The principal
 * is always set by the context factory (HTTP) or onConnect (graphql-ws); its absence is treated
 * as unauthenticated rather than trusted.
 */
@Injectable()
export class RolesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const gql = GqlExecutionContext.create(context);
    const principal = gql.getContext<GqlContext>()?.principal;
    if (!principal) throw new WeftError('UNAUTHENTICATED', 'Missing API key: send "Authorization: Bearer <key>"');
    const needed = this.reflector.get<Permission | undefined>(PERMISSION, context.getHandler()) ?? 'read';
    if (!roleAllows(principal.role, needed)) {
      const action = this.reflector.get<string | undefined>(ACTION, context.getHandler()) ?? DESCRIBE[needed];
      const field = gql.getInfo<{ fieldName?: string }>()?.fieldName ?? context.getHandler().name;
      throw new WeftError('FORBIDDEN', `The ${principal.role} role may not ${action}: ${field} needs the ${rolesAllowed(needed).join(' or ')} role`);
    }
    return true;
  }
}

const DESCRIBE: Record<Permission, string> = {
  read: 'read',
  operate: 'start, signal, cancel or retry runs',
  administer: 'publish workflow definitions, manage versions or manage API keys',
};
