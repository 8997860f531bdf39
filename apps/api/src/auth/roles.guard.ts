import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GqlExecutionContext } from '@nestjs/graphql';
import { WeftError } from '@weft/engine';
import type { GqlContext } from './gql-context.js';
import { roleAllows, type Permission } from './principal.js';

const PERMISSION = 'weft:permission';

/** The permission a resolver method needs; methods without one need `read`. */
export const Requires = (permission: Permission) => SetMetadata(PERMISSION, permission);

/**
 * Checks the caller's role against the method's {@link Requires} permission. The principal is
 * always set by the context factory (HTTP) or onConnect (graphql-ws); its absence is treated
 * as unauthenticated rather than trusted.
 */
@Injectable()
export class RolesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const principal = GqlExecutionContext.create(context).getContext<GqlContext>()?.principal;
    if (!principal) throw new WeftError('UNAUTHENTICATED', 'Missing API key: send "Authorization: Bearer <key>"');
    const needed = this.reflector.get<Permission | undefined>(PERMISSION, context.getHandler()) ?? 'read';
    if (!roleAllows(principal.role, needed)) {
      throw new WeftError('FORBIDDEN', `The ${principal.role} role may not ${DESCRIBE[needed]}`);
    }
    return true;
  }
}

const DESCRIBE: Record<Permission, string> = {
  read: 'read',
  operate: 'start, signal, cancel or retry runs',
  administer: 'publish workflow definitions',
};
