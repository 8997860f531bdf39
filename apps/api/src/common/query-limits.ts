import {
  getNullableType,
  getOperationAST,
  GraphQLError,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { getComplexity, type ComplexityEstimator, type ComplexityEstimatorArgs } from 'graphql-query-complexity';
import { WeftError, type Problem } from '@weft/engine';
import { RATE_LIMITS_MAX, RUN_ITEMS_PAGE_MAX, RUNS_PAGE_DEFAULT, RUNS_PAGE_MAX } from '@weft/persistence';

/** How much one operation may ask for, over HTTP and graphql-ws alike. */
export const QUERY_LIMITS = {
  /** Longest path of nested fields (`runs.edges.node.tasks.output` is 5). */
  maxDepth: 12,
  /** The same for a `__schema` / `__type` root field: the standard introspection query is 15 deep. */
  maxIntrospectionDepth: 16,
  /** Aliased fields in the operation, counted in every place a fragment is spread. */
  maxAliases: 20,
  /** Distinct root fields (response keys) of the operation. */
  maxRootFields: 20,
  /** Complexity budget; see {@link estimator}. */
  maxComplexity: 50_000,
  /**
   * The budget of an operation that reads only the schema (`__schema`, `__type`, `__typename`
   * roots): its cost grows with the schema, not with any tenant's data, and the standard
   * introspection query (GraphiQL's, codegen's) must keep fitting as the API grows.
   */
  maxIntrospectionComplexity: 200_000,
  /** Selections the complexity walk may visit once fragments are expanded. */
  maxSelections: 10_000,
  /** Lexical tokens in one document (string and number literals count one each). */
  maxTokens: 20_000,
  /** Operations in flight on one graphql-ws connection (subscriptions included). */
  maxSocketOperations: 50,
} as const;

/**
 * Largest HTTP request body and graphql-ws message, in bytes (4 MiB): a definition may be up to
 * 1 MB of YAML, plus JSON escaping. Over HTTP the body parser answers 413; over graphql-ws `ws`
 * closes the socket with 1009 (Message Too Big) as soon as a frame header announces more, before
 * the message is buffered or parsed.
 */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Assumed length of list fields without a `first` argument, or (tasks, history) called without
 * one: most runs have a few dozen tasks and events, while their default page is
 * RUN_ITEMS_PAGE_DEFAULT; the bytes of their stored JSON are bounded apart
 * (WEFT_MAX_RESPONSE_BYTES).
 */
const LIST_LENGTHS: Readonly<Record<string, number>> = {
  'Run.tasks': 50,
  'Run.history': 50,
  // At most 100 (the field's own cap).
  'Run.children': 100,
  'Query.workflows': 50,
  // At most RATE_LIMITS_MAX (the field's own cap).
  'Query.rateLimits': RATE_LIMITS_MAX,
  // Sized by the `first` of the field that returned the connection.
  'RunConnection.edges': 1,
  'ConcurrencyKeyConnection.edges': 1,
};
const DEFAULT_LIST_LENGTH = 10;

/**
 * A GraphQL error for an operation refused before it ran: BAD_USER_INPUT (HTTP 400) listing each
 * limit exceeded; the message starts with `summary` and repeats them.
 */
export function limitExceeded(problems: Problem[], summary = 'Query too complex'): GraphQLError {
  const weft = new WeftError('BAD_USER_INPUT', `${summary}: ${problems.map((p) => p.message).join('; ')}`, problems);
  return new GraphQLError(weft.message, { originalError: weft, extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });
}

/**
 * The limits of {@link QUERY_LIMITS} the operation (`operationName`, or the only one) of a
 * document that passed validation exceeds, each as a problem naming the limit; empty when it
 * may run. Root fields, aliases and depth are counted on the document (linear in its size,
 * fragments measured once); complexity by graphql-query-complexity with the request's
 * variables, so `runs(first: $n)` counts `$n`.
 */
export function assessOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): Problem[] {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return [];
  const problems: Problem[] = [];
  const shape = new DocumentShape(document);
  let roots: Map<string, { name: string; depth: number }>;
  let aliases: number;
  try {
    roots = shape.rootFields(operation.selectionSet);
    aliases = shape.aliases(operation.selectionSet);
  } catch (err) {
    if (err instanceof RangeError) return [{ message: 'selections are nested too deeply to measure' }];
    throw err;
  }
  if (roots.size > QUERY_LIMITS.maxRootFields) {
    problems.push({ message: `${roots.size} root fields exceed the limit of ${QUERY_LIMITS.maxRootFields} per operation` });
  }
  if (aliases > QUERY_LIMITS.maxAliases) {
    problems.push({ message: `${aliases} aliases exceed the limit of ${QUERY_LIMITS.maxAliases} per operation` });
  }
  for (const [key, { name, depth }] of roots) {
    const max = name === '__schema' || name === '__type' ? QUERY_LIMITS.maxIntrospectionDepth : QUERY_LIMITS.maxDepth;
    if (depth > max) {
      problems.push({ path: key, message: `depth ${depth} exceeds the limit of ${max}` });
      break;
    }
  }
  if (problems.length > 0) return problems;

  let complexity: number;
  try {
    complexity = getComplexity({
      schema,
      query: document,
      operationName: operationName ?? undefined,
      variables: variables ?? {},
      estimators: [estimator(schema)],
      maxQueryNodes: QUERY_LIMITS.maxSelections,
    });
  } catch (err) {
    if (!(err instanceof GraphQLError)) return [{ message: 'the operation could not be measured' }];
    if (/maximum allowed number of nodes/.test(err.message)) {
      return [{ message: `more than ${QUERY_LIMITS.maxSelections} selections once fragments are expanded` }];
    }
    return []; // variables that do not fit their types: execution refuses them
  }
  const schemaOnly = [...roots.values()].every((r) => r.name === '__schema' || r.name === '__type' || r.name === '__typename');
  const budget = schemaOnly ? QUERY_LIMITS.maxIntrospectionComplexity : QUERY_LIMITS.maxComplexity;
  if (complexity > budget) {
    problems.push({
      message:
        `complexity ${complexity} exceeds the budget of ${budget} ` +
        `(each field costs 1; a connection multiplies its fields by first, default ${RUNS_PAGE_DEFAULT}; ` +
        `tasks and history by their first, or ${LIST_LENGTHS['Run.tasks']} without it)`,
    });
  }
  return problems;
}

/**
 * The complexity of one field: `1 + length × childComplexity`, where length is the field's
 * `first` argument (clamped to 1…RUNS_PAGE_MAX, default RUNS_PAGE_DEFAULT; for a run's tasks and
 * history clamped to 1…RUN_ITEMS_PAGE_MAX, or {@link LIST_LENGTHS} without one), the assumed
 * length of a list field ({@link LIST_LENGTHS}; introspection lists by the schema's own
 * averages), or 1.
 */
function estimator(schema: GraphQLSchema): ComplexityEstimator {
  const introspection = introspectionLengths(schema);
  return (args: ComplexityEstimatorArgs) => {
    const computed = COMPUTED_FIELDS[`${args.type.name}.${args.field.name}`];
    return computed ? computed(args.args) : 1 + lengthOf(args, introspection) * args.childComplexity;
  };
}

/**
 * Fields whose answer is computed on the API's thread, by what one call costs: each upcoming
 * fire time walks the cron in its zone (a few hundred µs), so `upcoming(count: 100)` on a page of
 * 200 schedules would stall the process for seconds. At {@link UPCOMING_TIME_COST} a time, one
 * operation within the budget computes at most about a thousand. Some cost less than their
 * selection would count: those are priced whole, members included.
 */
const COMPUTED_FIELDS: Readonly<Record<string, (args: Record<string, unknown>) => number>> = {
  // A SWITCH task's decision is rebuilt from its branches and the run version's cached
  // definition: its members, the conditions of a few edges, cost nothing more to answer.
  'Task.decision': () => 1,
  'Schedule.upcoming': (args) =>
    1 + UPCOMING_TIME_COST * (typeof args.count === 'number' && Number.isFinite(args.count) ? Math.max(1, Math.min(100, Math.floor(args.count))) : 5),
};
export const UPCOMING_TIME_COST = 50;

/** List fields paged by `first` up to their own maximum, counted by `first` when it is given. */
const PAGED_LISTS: Readonly<Record<string, number>> = { 'Run.tasks': RUN_ITEMS_PAGE_MAX, 'Run.history': RUN_ITEMS_PAGE_MAX };

function lengthOf({ type, field, args }: ComplexityEstimatorArgs, introspection: Record<string, number>): number {
  const key = `${type.name}.${field.name}`;
  const pagedMax = PAGED_LISTS[key];
  if (pagedMax !== undefined) {
    const first = typeof args.first === 'number' && Number.isFinite(args.first) ? args.first : undefined;
    return first === undefined ? LIST_LENGTHS[key]! : Math.min(pagedMax, Math.max(1, Math.floor(first)));
  }
  if (field.args.some((a) => a.name === 'first')) {
    const first = typeof args.first === 'number' && Number.isFinite(args.first) ? args.first : RUNS_PAGE_DEFAULT;
    return Math.min(RUNS_PAGE_MAX, Math.max(1, Math.floor(first)));
  }
  if (!isListType(getNullableType(field.type))) return 1;
  return LIST_LENGTHS[key] ?? introspection[key] ?? DEFAULT_LIST_LENGTH;
}

const introspectionCache = new WeakMap<GraphQLSchema, Record<string, number>>();

/** Average list lengths of the schema's introspection (rounded up, at least 1), computed once. */
function introspectionLengths(schema: GraphQLSchema): Record<string, number> {
  let lengths = introspectionCache.get(schema);
  if (lengths) return lengths;
  const types = Object.values(schema.getTypeMap());
  const directives = schema.getDirectives();
  const avg = (counts: number[]) => Math.max(1, Math.ceil(counts.reduce((a, b) => a + b, 0) / Math.max(1, counts.length)));
  const outputs = types.filter((t) => isObjectType(t) || isInterfaceType(t));
  const fields = outputs.map((t) => Object.values(t.getFields()));
  lengths = {
    '__Schema.types': types.length,
    '__Schema.directives': directives.length,
    '__Type.fields': avg(fields.map((f) => f.length)),
    '__Type.inputFields': avg(types.filter(isInputObjectType).map((t) => Object.keys(t.getFields()).length)),
    '__Type.enumValues': avg(types.filter(isEnumType).map((t) => t.getValues().length)),
    '__Type.interfaces': avg(outputs.map((t) => t.getInterfaces().length)),
    '__Type.possibleTypes': avg(types.filter(isAbstractType).map((t) => schema.getPossibleTypes(t).length)),
    '__Field.args': avg(fields.flat().map((f) => f.args.length)),
    '__Directive.args': avg(directives.map((d) => d.args.length)),
  };
  introspectionCache.set(schema, lengths);
  return lengths;
}

/** Counts on one document's selection sets, each fragment measured once (a cycle counts as empty). */
class DocumentShape {
  private readonly fragments = new Map<string, FragmentDefinitionNode>();
  private readonly depths = new Map<string, number>();
  private readonly aliasCounts = new Map<string, number>();
  private readonly active = new Set<string>();

  constructor(document: DocumentNode) {
    for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(d.name.value, d);
  }

  /** Root fields by response key, with each one's name and depth (the field itself counts 1). */
  rootFields(set: SelectionSetNode, out = new Map<string, { name: string; depth: number }>()): Map<string, { name: string; depth: number }> {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const key = s.alias?.value ?? s.name.value;
        const depth = 1 + (s.selectionSet ? this.depth(s.selectionSet) : 0);
        out.set(key, { name: s.name.value, depth: Math.max(depth, out.get(key)?.depth ?? 0) });
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        this.rootFields(s.selectionSet, out);
      } else {
        const f = this.enter(s.name.value);
        if (f) {
          this.rootFields(f.selectionSet, out);
          this.active.delete(f.name.value);
        }
      }
    }
    return out;
  }

  /** Longest path of nested fields under `set`. */
  depth(set: SelectionSetNode): number {
    let max = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) max = Math.max(max, 1 + (s.selectionSet ? this.depth(s.selectionSet) : 0));
      else if (s.kind === Kind.INLINE_FRAGMENT) max = Math.max(max, this.depth(s.selectionSet));
      else
        max = Math.max(
          max,
          this.viaFragment(s.name.value, this.depths, (f) => this.depth(f.selectionSet)),
        );
    }
    return max;
  }

  /** Aliased fields under `set`, a fragment counted once per spread. */
  aliases(set: SelectionSetNode): number {
    let n = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) n += (s.alias ? 1 : 0) + (s.selectionSet ? this.aliases(s.selectionSet) : 0);
      else if (s.kind === Kind.INLINE_FRAGMENT) n += this.aliases(s.selectionSet);
      else n += this.viaFragment(s.name.value, this.aliasCounts, (f) => this.aliases(f.selectionSet));
    }
    return n;
  }

  private viaFragment(name: string, memo: Map<string, number>, measure: (f: FragmentDefinitionNode) => number): number {
    const known = memo.get(name);
    if (known !== undefined) return known;
    const f = this.enter(name);
    if (!f) return 0;
    const value = measure(f);
    this.active.delete(name);
    memo.set(name, value);
    return value;
  }

  /** The fragment, marked as being measured; undefined when unknown or already on the path. */
  private enter(name: string): FragmentDefinitionNode | undefined {
    const f = this.fragments.get(name);
    if (!f || this.active.has(name)) return undefined;
    this.active.add(name);
    return f;
  }
}
