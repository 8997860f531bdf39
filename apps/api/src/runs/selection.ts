import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * The names of the fields the operation selects under the field `info` resolves, through inline
 * fragments and fragment spreads (every branch, whatever its directives), following `path` first
 * (e.g. `['edges', 'node']` from a connection to its items). Without `info`: undefined.
 */
export function selectedFields(info: GraphQLResolveInfo | undefined, path: readonly string[] = []): Set<string> | undefined {
  if (!info) return undefined;
  let fields = fieldsOf(
    info.fieldNodes.map((f) => f.selectionSet),
    info,
  );
  for (const step of path)
    fields = fieldsOf(
      fields.filter((f) => f.name.value === step).map((f) => f.selectionSet),
      info,
    );
  return new Set(fields.map((f) => f.name.value));
}

function fieldsOf(sets: readonly (SelectionSetNode | undefined)[], info: GraphQLResolveInfo): FieldNode[] {
  const out: FieldNode[] = [];
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode | undefined) => {
    for (const s of set?.selections ?? []) {
      if (s.kind === Kind.FIELD) out.push(s);
      else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        walk(info.fragments[s.name.value]?.selectionSet);
      }
    }
  };
  for (const set of sets) walk(set);
  return out;
}

/**
 * The names of the fields every execution of the field `info` resolves surely selects under it:
 * {@link selectedFields} without the fields and fragments a directive (`@skip`, `@include`)
 * may leave out.
 */
export function surelySelectedFields(info: GraphQLResolveInfo): Set<string> {
  const out = new Set<string>();
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode | undefined) => {
    for (const s of set?.selections ?? []) {
      if (s.directives?.length) continue;
      if (s.kind === Kind.FIELD) out.add(s.name.value);
      else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const fragment = info.fragments[s.name.value];
        if (!fragment?.directives?.length) walk(fragment?.selectionSet);
      }
    }
  };
  for (const f of info.fieldNodes) walk(f.selectionSet);
  return out;
}
