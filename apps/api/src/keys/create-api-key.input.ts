import { Field, InputType } from '@nestjs/graphql';
import { IsIn, ValidateBy, type ValidationOptions } from 'class-validator';
import type { Role } from '../auth/principal.js';
import { ApiKeyRoleEnum } from './api-key.object.js';

/** Longest key name, in characters (code points) once trimmed. */
export const KEY_NAME_MAX = 100;

/** C0 and C1 control characters, DEL, and the line/paragraph separators. */
/**
 * Control, format (zero-width, soft hyphen, bidirectional overrides) and line/paragraph
 * separators; the zero-width joiner of emoji sequences is allowed.
 */
const CONTROL = new RegExp('[[\\p{Cc}\\p{Cf}\\u2028\\u2029]--[\\u200d]]', 'v');
/** A name must show something: at least one letter, digit, punctuation or symbol. */
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;

/**
 * Why `value` is not a key name, or undefined when it is one: a string of 1 to
 * {@link KEY_NAME_MAX} characters once trimmed, without control characters.
 */
export function keyNameProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'name must be a string';
  const trimmed = value.trim();
  if (trimmed.length === 0) return 'name must not be empty';
  const length = [...trimmed].length;
  if (length > KEY_NAME_MAX) return `name is ${length} characters; at most ${KEY_NAME_MAX}`;
  if (CONTROL.test(trimmed)) return 'name must not contain control or invisible formatting characters';
  if (!VISIBLE.test(trimmed)) return 'name must contain a visible character';
  return undefined;
}

function IsKeyName(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isKeyName',
      validator: {
        validate: (value: unknown) => keyNameProblem(value) === undefined,
        defaultMessage: (args) => keyNameProblem(args?.value) ?? 'invalid name',
      },
    },
    options,
  );
}

@InputType()
export class CreateApiKeyInput {
  @Field(() => String, { description: `A label for the key, 1 to ${KEY_NAME_MAX} characters (trimmed), no control characters.` })
  @IsKeyName()
  name: string;

  @Field(() => ApiKeyRoleEnum)
  @IsIn(Object.values(ApiKeyRoleEnum))
  role: Role;
}
