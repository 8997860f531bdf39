/**
 * Parsing and validation of published definitions: YAML or JSON in, every problem out, each with
 * the node id and path it concerns. Validation is a list of small rules (validation/), run in
 * the order their problems are reported. It sits above the template layer: templates are
 * compiled with the same CEL compiler as at run time, so publishing and running agree on what an
 * expression is.
 */
import YAML, { type YAMLError } from 'yaml';
import { WeftError, type Problem } from '../errors.js';
import { jsonLongerThan } from './json-size.js';
import { definitionContext, isObject, type DefinitionRule, type EdgeRule, type NodeRule } from './validation/context.js';
import {
  acyclic,
  definitionKeys,
  definitionLists,
  definitionTexts,
  eachEdge,
  eachNode,
  entryAndReachability,
  runOutput,
  runTimeout,
} from './validation/definition-rules.js';
import { nodeFlow, runConcurrency, runPriority } from './validation/flow-rules.js';
import { edgeCondition, edgeEnds, edgeKeys, edgeOnError, uniqueEdge } from './validation/edge-rules.js';
import { finallyStep } from './validation/finally-rules.js';
import {
  nodeKeys,
  nodeTexts,
  nodeType,
  onExhausted,
  payloadHygiene,
  queue,
  runtimeOnCode,
  scheduleToStart,
  specValues,
  uniqueNodeId,
} from './validation/node-rules.js';
import { loopBodies, loopSpecRule } from './validation/loop-rules.js';
import { retry } from './validation/retry-rules.js';
import { forEach, typeSpec } from './validation/spec-rules.js';
import type { WorkflowDefinition } from './workflow-definition.js';

/** The rules over each node, in the order their problems are reported. */
const NODE_RULES: readonly NodeRule[] = [
  uniqueNodeId,
  nodeKeys,
  nodeTexts,
  queue,
  runtimeOnCode,
  payloadHygiene,
  onExhausted,
  scheduleToStart,
  nodeType,
  typeSpec,
  loopSpecRule,
  forEach,
  nodeFlow,
  retry,
  specValues,
];

/** The rules over each edge, in order. */
const EDGE_RULES: readonly EdgeRule[] = [edgeKeys, edgeEnds, edgeCondition, edgeOnError, uniqueEdge];

/** The rules over the definition, in order: its shape and flow control, then each node, each edge, the output and the graph. */
const DEFINITION_RULES: readonly DefinitionRule[] = [
  definitionKeys,
  definitionTexts,
  definitionLists,
  runConcurrency,
  runPriority,
  runTimeout,
  eachNode(NODE_RULES),
  eachEdge(EDGE_RULES),
  loopBodies(NODE_RULES, EDGE_RULES),
  finallyStep,
  runOutput,
  acyclic,
  entryAndReachability,
];

/**
 * Validates a parsed definition and lists EVERY problem found (an empty list means valid), each
 * with `nodeId` (when it concerns a node), `path` (e.g. `nodes[2].spec.url`, `edges[0].to`) and
 * `message`. The checks, rule by rule: the shape and its keys (anything unknown is an `unknown
 * field`, with `(did you mean "X"?)` when an allowed key is close); node ids, types and per-type
 * specs, each spec with only the keys its executor reads (a CODE spec's other keys are its
 * handler's input: only near misses of its limits are refused); payload hygiene and `for_each` fields; flow
 * control (the definition's `concurrency` and `priority`, a node's `concurrency` and
 * `rate_limit`, validation/flow-rules.ts); retry policies; JSON-only values; edge ends, conditions and `on_error`; every template of every spec,
 * condition and the `output` (closed, CEL that compiles, static `tasks.<id>` references to
 * declared nodes, `run` read by the `finally` step's alone); the `finally` step (validation/finally-rules.ts); cycles; the entry node and reachability from it. Never throws.
 */
export function validateDefinition(def: unknown): Problem[] {
  if (!isObject(def)) return [{ message: 'a workflow definition must be an object with a "nodes" list and an "edges" list' }];
  const ctx = definitionContext(def);
  return DEFINITION_RULES.flatMap((rule) => rule(ctx));
}

/**
 * The most nodes and edges a definition may have. Publishing is refused above them before any
 * rule runs: parsing and validation take time in proportion to the definition (CEL compilation
 * of every template, the graph's analysis), and an API process validates on its own threads.
 */
export interface DefinitionLimits {
  /** Most entries of `nodes` (`WEFT_MAX_DEFINITION_NODES`). */
  maxNodes: number;
  /** Most entries of `edges` (`WEFT_MAX_DEFINITION_EDGES`). */
  maxEdges: number;
}

/**
 * 2,000 nodes (about 0.2 s to validate with a template per node on one core; a definition of
 * that many steps is a data set, better fanned out with `for_each`) and 10,000 edges (five per
 * node: a dense DAG of 2,000 nodes).
 */
export const DEFAULT_DEFINITION_LIMITS: DefinitionLimits = { maxNodes: 2000, maxEdges: 10_000 };

/**
 * The problem with a definition over `limits` (its node or edge count, the cap and the setting
 * that raises it), or undefined. Reads only the two lists' lengths: it runs before every other
 * rule, whatever the definition holds.
 */
export function definitionSizeProblem(def: unknown, limits: DefinitionLimits = DEFAULT_DEFINITION_LIMITS): Problem | undefined {
  if (!isObject(def)) return undefined;
  // DO_WHILE bodies count with the graph: they are nodes and edges the engine holds alike.
  const bodies = Array.isArray(def.nodes) ? def.nodes.map((n) => (isObject(n) && n.type === 'DO_WHILE' && isObject(n.spec) ? n.spec.body : undefined)) : [];
  const length = (list: unknown) => (Array.isArray(list) ? list.length : 0);
  const nodes = length(def.nodes) + bodies.reduce<number>((sum, b) => sum + (isObject(b) ? length(b.nodes) : 0), 0);
  const edges = length(def.edges) + bodies.reduce<number>((sum, b) => sum + (isObject(b) ? length(b.edges) : 0), 0);
  const over = (count: number, max: number, what: string, setting: string): Problem | undefined =>
    count > max
      ? {
          path: what,
          message: `definition has ${count} ${what}${count > length(def[what]) ? ' (DO_WHILE bodies included)' : ''}; at most ${max} are allowed (${setting})`,
        }
      : undefined;
  return over(nodes, limits.maxNodes, 'nodes', 'WEFT_MAX_DEFINITION_NODES') ?? over(edges, limits.maxEdges, 'edges', 'WEFT_MAX_DEFINITION_EDGES');
}

/**
 * Most alias expansions `toJS` performs (the `yaml` package's `maxAliasCount`): a "billion
 * laughs" document of nested anchors would otherwise expand exponentially. Also the most alias
 * nodes a document may hold ({@link aliasProblem}).
 */
const MAX_ALIASES = 100;

/** Most characters of JSON a definition with aliases may expand to: as many as a definition's text may have. */
const MAX_EXPANDED_CHARS = 1_000_000;

/** A value that starts with an unquoted `{{` on a line: after `key:`, `- `, `[` or `,`. */
const UNQUOTED_TEMPLATE = /(?:^\s*-?|[:,[])\s*\{\{/;

/**
 * The problem of a YAML syntax error, at its line and column; when that line has a value that
 * starts with an unquoted `{{`, a hint to quote the template (YAML reads `{` as a map).
 */
function yamlProblem(err: YAMLError, source: string): Problem {
  const first = err.message.split('\n')[0].replace(/:\s*$/, '');
  const pos = err.linePos?.[0];
  const where = pos && !/ at line \d+/.test(first) ? ` at line ${pos.line}, column ${pos.col}` : '';
  const line = pos ? (source.split(/\r?\n/)[pos.line - 1] ?? '') : '';
  const hint = UNQUOTED_TEMPLATE.test(line) ? `; a value that starts with {{ must be quoted in YAML, e.g. key: "{{ input.customer }}"` : '';
  return { path: pos ? `line ${pos.line}, column ${pos.col}` : undefined, message: `YAML syntax error: ${first}${where}${hint}` };
}

/** A problem for an error `toJS` throws (alias bombs, unresolved aliases, …); never rethrown. */
function conversionProblem(err: unknown): Problem {
  const msg = err instanceof Error ? err.message.split('\n')[0] : String(err);
  if (/excessive alias count/i.test(msg)) return tooManyAliases();
  return { message: `YAML error: ${msg}` };
}

function tooManyAliases(): Problem {
  return { message: `YAML error: too many alias expansions (more than ${MAX_ALIASES}); do not nest anchors and aliases` };
}

/**
 * The first key, in the text's order, that repeats an earlier key of its mapping. The `yaml`
 * package's own check (`uniqueKeys`) compares each key with every earlier one: 16,000 keys in
 * 64 KB of flow mapping (`{a,b,c,…}`) take seconds, 1 MB minutes. One pass with a set instead;
 * keys are equal as the package's check has them (scalars by value, other nodes by identity).
 */
function duplicateKey(doc: YAML.Document, lines: YAML.LineCounter): Problem | undefined {
  let first: number | undefined;
  YAML.visit(doc, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        const id = YAML.isScalar(key) ? key.value : key;
        if (!seen.has(id)) seen.add(id);
        else {
          const at = YAML.isNode(key) && key.range ? key.range[0] : (map.range?.[0] ?? 0);
          if (first === undefined || at < first) first = at;
        }
      }
      return undefined;
    },
  });
  if (first === undefined) return undefined;
  const pos = lines.linePos(first);
  return { path: `line ${pos.line}, column ${pos.col}`, message: `YAML syntax error: Map keys must be unique at line ${pos.line}, column ${pos.col}` };
}

/**
 * More than {@link MAX_ALIASES} aliases, or an alias inside the node it refers to
 * (`a: &a [*a]`: the result would be circular). One pass in the text's order, each alias taken
 * to the latest anchor of its name before it, as `Alias.resolve` has it. That function walks
 * the anchors and aliases before it for each alias (`toJS` calls it), or the whole document:
 * 15,000 aliases in 45 KB took 26 s, 5,000 anchors each aliased once 1 s. Also counts the aliases.
 */
function aliasProblem(doc: YAML.Document, lines: YAML.LineCounter): { problem: Problem | undefined; count: number } {
  const anchors = new Map<string, YAML.Node>();
  let aliases = 0;
  let found: Problem | undefined;
  YAML.visit(doc, {
    Node(_key, node, path) {
      if (!YAML.isAlias(node)) {
        if (node.anchor) anchors.set(node.anchor, node);
        return undefined;
      }
      if (++aliases > MAX_ALIASES) {
        found = tooManyAliases();
        return YAML.visit.BREAK;
      }
      const target = anchors.get(node.source);
      if (target && contains(target, node, path)) {
        const pos = node.range ? lines.linePos(node.range[0]) : undefined;
        found = {
          path: pos ? `line ${pos.line}, column ${pos.col}` : undefined,
          message: `YAML error: alias *${node.source} refers to a node that contains it`,
        };
        return YAML.visit.BREAK;
      }
      return undefined;
    },
  });
  return { problem: found, count: aliases };
}

/** Whether `outer` holds `node`: by their places in the text, or failing those by `node`'s ancestors. */
function contains(outer: YAML.Node, node: YAML.Node, ancestors: readonly unknown[]): boolean {
  if (!YAML.isCollection(outer)) return false;
  if (outer.range && node.range) return outer.range[0] <= node.range[0] && node.range[0] < outer.range[2];
  return ancestors.includes(outer);
}

/** The error thrown for an invalid definition: `BAD_USER_INPUT` with every problem. */
export function invalidDefinition(problems: Problem[]): WeftError {
  return new WeftError('BAD_USER_INPUT', `invalid workflow definition: ${problems.length} problem(s)`, problems);
}

/**
 * Parses a definition written in YAML or JSON (YAML 1.2 is a JSON superset). Does NOT validate:
 * the result has the definition's shape only if {@link validateDefinition} finds no problem.
 * @throws WeftError `BAD_USER_INPUT` with one problem (its line and column) on a syntax error.
 */
export function parseDefinition(source: string): WorkflowDefinition {
  const lines = new YAML.LineCounter();
  // logLevel error: no process warning (an unquoted `{{ x }}` is a map used as a key, which the
  // package would warn about on stderr); the validator names that mistake.
  const doc = YAML.parseDocument(source, { uniqueKeys: false, prettyErrors: true, lineCounter: lines, logLevel: 'error' });
  if (doc.errors.length > 0) throw invalidDefinition([yamlProblem(doc.errors[0], source)]);
  const duplicate = duplicateKey(doc, lines);
  if (duplicate) throw invalidDefinition([duplicate]);
  const aliases = aliasProblem(doc, lines);
  if (aliases.problem) throw invalidDefinition([aliases.problem]);
  let def: WorkflowDefinition;
  try {
    def = doc.toJS({ maxAliasCount: MAX_ALIASES }) as WorkflowDefinition;
  } catch (err) {
    throw invalidDefinition([conversionProblem(err)]);
  }
  // An alias is one object in memory but is written out (stored, sent, read) once per use: a
  // few aliases of one large anchor would make a small text a huge definition.
  if (aliases.count > 0 && jsonLongerThan(def, MAX_EXPANDED_CHARS)) {
    throw invalidDefinition([
      {
        message: `YAML error: its aliases expand the definition to more than ${MAX_EXPANDED_CHARS.toLocaleString('en-US')} characters of JSON; write the repeated parts once, or fewer times`,
      },
    ]);
  }
  return def;
}

/**
 * Parses, validates and normalizes (`edges` defaults to `[]`) a definition. One over `limits`
 * is refused before it is validated ({@link definitionSizeProblem}).
 * @throws WeftError `BAD_USER_INPUT`, message `invalid workflow definition: N problem(s)`, with
 * every problem in `problems`; over a limit, the message is that problem's.
 */
export function loadDefinition(source: string, limits: DefinitionLimits = DEFAULT_DEFINITION_LIMITS): WorkflowDefinition {
  const def = parseDefinition(source);
  const tooLarge = definitionSizeProblem(def, limits);
  if (tooLarge) throw new WeftError('BAD_USER_INPUT', tooLarge.message, [tooLarge]);
  const problems = validateDefinition(def);
  if (problems.length > 0) throw invalidDefinition(problems);
  return { ...def, edges: def.edges ?? [] };
}
