import { Field, type FieldOptions } from '@nestjs/graphql';
import { registerDecorator, type ValidationOptions } from 'class-validator';
import { GraphQLScalarType, Kind, type ObjectValueNode, type ValueNode } from 'graphql';

/** Any JSON value (object, array, string, number, boolean or null), as in graphql-type-json. */
export const GraphQLJSON = new GraphQLScalarType({
  name: 'JSON',
  description: 'A free-form JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => parseLiteral(ast, variables ?? undefined),
});

function parseLiteral(ast: ValueNode, variables: Record<string, unknown> | undefined): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map((v) => parseLiteral(v, variables));
    case Kind.OBJECT:
      return parseObject(ast, variables);
    case Kind.VARIABLE:
      return variables?.[ast.name.value];
    case Kind.ENUM:
      return ast.value;
  }
}

function parseObject(ast: ObjectValueNode, variables: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of ast.fields) out[f.name.value] = parseLiteral(f.value, variables);
  return out;
}

/** Input class (its constructor) → the members declared with {@link JsonField}. */
const jsonFields = new WeakMap<object, Set<string>>();
const NONE: ReadonlySet<string> = new Set();

/**
 * A field of type {@link GraphQLJSON} on an input class, marked so that the validation pipe
 * walks its value as JSON (problems at `field.$.a[0]`).
 */
export function JsonField(options: Pick<FieldOptions, 'nullable' | 'description'> = {}): PropertyDecorator {
  const field = Field(() => GraphQLJSON, options);
  return (target, property) => {
    field(target, property);
    let set = jsonFields.get(target.constructor);
    if (!set) jsonFields.set(target.constructor, (set = new Set()));
    set.add(String(property));
  };
}

/** The members of an input class declared with {@link JsonField}. */
export function jsonFieldsOf(type: object | undefined): ReadonlySet<string> {
  return (type && jsonFields.get(type)) ?? NONE;
}

/** class-validator: the value is a JSON object (not an array, string, number or boolean). */
export function IsJsonObject(options?: ValidationOptions): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'isJsonObject',
      target: target.constructor,
      propertyName: String(property),
      options: { message: 'must be a JSON object', ...options },
      validator: { validate: (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value) },
    });
}
