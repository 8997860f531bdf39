import { WeftError } from '@weft/engine';

/**
 * A TRANSIENT refusal whose message is written for the caller (a bounded resource is full, and
 * which one): the error formatter sends it as it is, where other TRANSIENT errors, which may carry
 * a driver's words, get a generic message.
 */
export class BusyError extends WeftError {
  constructor(message: string) {
    super('TRANSIENT', message);
  }
}
