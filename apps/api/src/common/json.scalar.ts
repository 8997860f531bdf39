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
