/**
 * What a definition may say: the keys of each object, the CODE runtimes and HTTP methods, the
 * shape of node ids and aliases, and the bounds of literal values. Validation refuses anything
 * else by name.
 */

/** CODE runtimes a definition may name. */
export const CODE_RUNTIMES: readonly string[] = ['python', 'js', 'node'];

/** HTTP methods a literal `spec.method` may name (case-insensitive). */
export const HTTP_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** What a literal HTTP `spec.response` may be: the parsed body (default) or `{status, headers, body}`. */
export const HTTP_RESPONSES: readonly string[] = ['body', 'full'];

/** The keys a node may have; anything else is an unknown field. */
export const NODE_KEYS: readonly string[] = [
  'node_id',
  'name',
  'type',
  'runtime',
  'spec',
  'retry',
  'queue',
  'description',
  'output_keep',
  'output_drop',
  'sensitive',
  'for_each',
  'as',
  'max_concurrency',
  'reducers',
  'tolerated_failures',
  'concurrency',
  'rate_limit',
  'on_exhausted',
  'schedule_to_start_seconds',
];
/** The keys an edge may have. */
export const EDGE_KEYS: readonly string[] = ['from', 'to', 'condition', 'on_error'];
/** The keys a definition may have at the top level. */
export const DEFINITION_KEYS: readonly string[] = [
  'nodes',
  'edges',
  'output',
  'name',
  'description',
  'workflow_id',
  'concurrency',
  'priority',
  'timeout_seconds',
  'finally',
];
/**
 * The node fields the definition's `finally` step may not have: it runs one task, once, and
 * cannot pause the run it ends.
 */
export const FINALLY_EXCLUDED_KEYS: readonly string[] = ['for_each', 'as', 'max_concurrency', 'reducers', 'tolerated_failures', 'on_exhausted'];
/** The keys of the definition's `concurrency` (how many runs may be active at once); bounds in model/flow-control.ts. */
export const RUN_CONCURRENCY_KEYS: readonly string[] = ['key', 'limit', 'strategy', 'scope'];
/** The keys of a node's `concurrency` (how many of its tasks may run at once, across runs). */
export const NODE_CONCURRENCY_KEYS: readonly string[] = ['key', 'limit'];
/** The keys of a node's `rate_limit` (how many of its tasks may start per period, across runs). */
export const RATE_LIMIT_KEYS: readonly string[] = ['key', 'limit', 'per_seconds'];
/** The variables the definition's `concurrency.key` may read: what a run holds when it starts. */
export const RUN_KEY_ROOTS: readonly string[] = ['input', 'config'];
/** The keys of a retry policy. */
export const RETRY_KEYS: readonly string[] = ['max_attempts', 'backoff_seconds', 'non_retryable'];
/**
 * The keys of an HTTP node's spec, each read by the worker's HTTP executor: a typo (`methd: POST`)
 * would otherwise send a GET.
 */
export const HTTP_SPEC_KEYS: readonly string[] = ['url', 'method', 'headers', 'body', 'timeout_seconds', 'accept_status', 'response'];
/**
 * The keys of a CODE node's spec that the CODE executor reads itself. Every other key is the
 * handler's input, so only a near miss of one of these (`memory`, `timeoutSeconds`) is refused:
 * it would otherwise leave the default limit in place and hand the handler a stray key.
 */
export const CODE_SPEC_KEYS: readonly string[] = ['code', 'timeout_seconds', 'memory_mb'];
/** The keys of a WAIT node's spec. */
export const WAIT_SPEC_KEYS: readonly string[] = ['duration_seconds', 'until'];
/** The keys of a WAIT_FOR_EVENT node's spec: a typo (`timeout:`) would otherwise wait forever. */
export const WAIT_FOR_EVENT_SPEC_KEYS: readonly string[] = ['event', 'timeout_seconds'];
/** The keys of a SUBWORKFLOW node's spec: a typo (`inputs:`) would otherwise start the child with `{}`. */
export const SUBWORKFLOW_SPEC_KEYS: readonly string[] = ['workflow', 'version', 'input', 'config'];
/** The keys of a SWITCH node's spec: its default successor. */
export const SWITCH_SPEC_KEYS: readonly string[] = ['default'];
/** The keys of a JOIN node's spec: a typo (`reducer:`) would otherwise leave its output `{}`. */
export const JOIN_SPEC_KEYS: readonly string[] = ['reducers'];

/**
 * Node keys that are part of the definition language but not implemented, so refused as `… is not
 * supported yet` rather than ignored. Empty: every key is implemented.
 */
export const UNSUPPORTED_NODE_KEYS: readonly string[] = [];
/** Edge keys refused as not implemented yet, like {@link UNSUPPORTED_NODE_KEYS}. Empty. */
export const UNSUPPORTED_EDGE_KEYS: readonly string[] = [];

/** A node id: a letter or `_`, then up to 127 letters, digits, `_` or `-`. */
export const NODE_ID_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/;

/** A `for_each` alias: a CEL identifier of at most 64 characters. */
export const ALIAS_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** The variables every template may read (besides a for_each node's alias in its own templates). */
export const TEMPLATE_ROOTS: readonly string[] = ['input', 'config', 'tasks', 'system'];
/** The variable a template of the workflow's `finally` node reads the run under (`run.id`, `run.status`, `run.error`). */
export const FINALLY_ROOT = 'run';
/** The alias of a for_each node without `as`. */
export const DEFAULT_ALIAS = 'item';
/** Names a `for_each` alias may not take: the template variables every node sees. */
export const RESERVED_ALIASES: readonly string[] = ['input', 'config', 'tasks', 'system', 'run'];
/** CEL's reserved words: an alias named so could not be read (`{{true}}` is the literal). */
export const CEL_RESERVED: readonly string[] = [
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
];

/** Bounds of a retry policy: `max_attempts` 1..100, `backoff_seconds` 0..86,400 (one day). */
export const RETRY_LIMITS = { maxAttempts: 100, maxBackoffSeconds: 86_400 } as const;

/** Bounds of a literal CODE `spec.memory_mb`, in megabytes. */
export const CODE_MEMORY_MB = { min: 16, max: 4096 } as const;
