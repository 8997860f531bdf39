import { ValidationPipe, type ArgumentMetadata, type PipeTransform, type Type, type ValidationError } from '@nestjs/common';
import { WeftError, type Problem } from '@weft/engine';
import { jsonFieldsOf } from './json.scalar.js';
import { unstorableProblems } from './storable.js';

/**
 * The pipe of every `@Args`: a failure is WeftError BAD_USER_INPUT listing each problem with its
 * path. Paths are relative to a mutation's `input` object (`workflowId`, `input.$.customer`) and
 * start with the argument's name otherwise (`filter.createdAfter`, `workflowId` for a scalar).
 * Values are not transformed: resolvers get what GraphQL coerced.
 *
 * 1. Every string, JSON members and keys included, must be storable by PostgreSQL (no NUL, no
 *    lone surrogate); the error message names the first problem (`input.$.a: contains a NUL
 *    character`).
 * 2. class-validator on an input class. `type` names the class when the parameter's design type
 *    cannot (TypeScript emits `Object` for `RunFilter | null`, and the validators would be
 *    skipped silently).
 */
export function createValidationPipe(type?: Type<object>): PipeTransform {
  return new InputPipe(type);
}

class InputPipe implements PipeTransform {
  private readonly validator: ValidationPipe;

  constructor(private readonly type: Type<object> | undefined) {
    this.validator = new ValidationPipe({
      // One validator option only: then the pipe hands back the value itself, not a class-to-plain copy.
      transform: false,
      forbidUnknownValues: false,
      expectedType: type,
      exceptionFactory: (errors: ValidationError[]) => new WeftError('BAD_USER_INPUT', 'Invalid input', flatten(errors, '')),
    });
  }

  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const prefix = metadata.data && metadata.data !== 'input' ? metadata.data : '';
    const cls = this.type ?? (isClass(metadata.metatype) ? metadata.metatype : undefined);
    const unstorable = unstorableProblems(value, prefix, { jsonFields: jsonFieldsOf(cls) });
    if (unstorable.length > 0) {
      const [first] = unstorable;
      throw new WeftError('BAD_USER_INPUT', `${first!.path}: ${first!.message}`, unstorable);
    }
    try {
      await this.validator.transform(value, metadata);
    } catch (err) {
      if (!(err instanceof WeftError) || !prefix) throw err;
      throw new WeftError(
        err.code,
        err.message,
        err.problems.map((p) => ({ ...p, path: p.path ? `${prefix}.${p.path}` : prefix })),
      );
    }
    return value;
  }
}

const PRIMITIVES = new Set<unknown>([String, Number, Boolean, Object, Array, Date, Function]);

function isClass(metatype: unknown): metatype is Type<object> {
  return typeof metatype === 'function' && !PRIMITIVES.has(metatype);
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
