import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { WeftError, type Problem } from '@weft/engine';

/**
 * class-validator on every `@Args` input class; a failure becomes WeftError BAD_USER_INPUT
 * listing each problem with its path inside the argument (`workflowId`, `payload.x`). Values are not transformed: resolvers
 * get what GraphQL coerced.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    // One validator option only: then the pipe hands back the value itself, not a class-to-plain copy.
    transform: false,
    forbidUnknownValues: false,
    exceptionFactory: (errors: ValidationError[]) =>
      new WeftError('BAD_USER_INPUT', 'Invalid input', flatten(errors, '')),
  });
}

function flatten(errors: ValidationError[], prefix: string): Problem[] {
  const out: Problem[] = [];
  for (const e of errors) {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    for (const message of Object.values(e.constraints ?? {})) out.push({ path, message });
    if (e.children?.length) out.push(...flatten(e.children, path));
  }
  return out;
}
