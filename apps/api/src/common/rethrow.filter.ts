import { Catch, type ExceptionFilter } from '@nestjs/common';

/**
 * Hands every resolver exception back to GraphQL untouched. Without it Nest's default handler
 * logs each one as an ERROR with its stack, expected WeftErrors (NOT_FOUND, FORBIDDEN…)
 * included; the error formatter logs the unexpected ones instead, once.
 */
@Catch()
export class RethrowFilter implements ExceptionFilter {
  catch(exception: unknown): never {
    throw exception;
  }
}
