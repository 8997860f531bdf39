import { guardedConnector as guarded, refusalKind, refusalMessage } from '@weft/platform';
import type { buildConnector } from 'undici';
import { ExecutionError } from './executor.js';

export { addressRefusal, normalizeHost } from '@weft/platform';

/**
 * A connection the address guard refused, as an execution failure that is not retried. `message`
 * names the host and address; `reason` only the kind of address (`a loopback address`), for the
 * messages of a sensitive execution.
 */
export class RefusedAddressError extends ExecutionError {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message, false, 'refused_address');
  }
}

/** The shared address guard (`@weft/platform`'s `guardedConnector`), its refusals {@link RefusedAddressError}s of the worker. */
export function guardedConnector(isHostAllowed: (host: string) => boolean): buildConnector.connector {
  return guarded(isHostAllowed, (host, address, why) => new RefusedAddressError(refusalMessage('the worker', host, address, why), refusalKind(why)));
}
