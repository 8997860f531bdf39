import { describe, expect, it } from '@jest/globals';
import { validateDefinition } from '../validate.js';
import { editDistance, suggestKey } from './suggest.js';

/** A definition of one node `charge` of `type`, with `spec` and any other node fields. */
function one(type: string, spec: unknown, extra: Record<string, unknown> = {}): unknown {
  return { nodes: [{ node_id: 'charge', type, spec, ...extra }] };
}

/** Each problem as `path: message`. */
const messages = (def: unknown): string[] => validateDefinition(def).map((p) => `${p.path}: ${p.message}`);

const HTTP_KEYS = 'url, method, headers, body, timeout_seconds, accept_status, response';

describe('unknown spec keys are refused at publish, with a suggestion when one is close', () => {
  it('refuses an HTTP methd: POST, naming the node, the path, the allowed keys and the key it misspells', () => {
    expect(validateDefinition(one('HTTP', { url: 'https://pay.example.com/charges', methd: 'POST' }))).toEqual([
      {
        nodeId: 'charge',
        path: 'nodes[0].spec.methd',
        message: `unknown field "methd" in an HTTP spec (did you mean "method"?); expected one of ${HTTP_KEYS}`,
      },
    ]);
  });

  it('accepts every key the HTTP executor reads, and lists an unknown one without a suggestion when none is close', () => {
    const full = {
      url: 'https://x',
      method: 'POST',
      headers: { 'x-id': '1' },
      body: { a: 1 },
      timeout_seconds: 5,
      accept_status: ['2xx', 404],
      response: 'full',
    };
    expect(messages(one('HTTP', full))).toEqual([]);
    expect(messages(one('HTTP', { url: 'https://x', colour: 'red', hedaers: {} }))).toEqual([
      `nodes[0].spec.colour: unknown field "colour" in an HTTP spec; expected one of ${HTTP_KEYS}`,
      `nodes[0].spec.hedaers: unknown field "hedaers" in an HTTP spec (did you mean "headers"?); expected one of ${HTTP_KEYS}`,
    ]);
  });

  it('refuses a literal HTTP response that is neither body nor full', () => {
    expect(messages(one('HTTP', { url: 'https://x', response: 'ful' }))).toEqual([
      'nodes[0].spec.response: unknown HTTP response "ful" (did you mean "full"?); expected one of body, full',
    ]);
    expect(messages(one('HTTP', { url: 'https://x', response: '{{input.shape}}' }))).toEqual([]);
  });

  it('suggests a method for a near miss only', () => {
    expect(messages(one('HTTP', { url: 'https://x', method: 'PSOT' }))).toEqual([
      'nodes[0].spec.method: unknown HTTP method "PSOT" (did you mean "POST"?); expected one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS',
    ]);
  });

  it('refuses unknown WAIT keys: an abbreviation points at the full key', () => {
    expect(messages(one('WAIT', { duration: 5 }))).toEqual([
      'nodes[0].spec.duration: unknown field "duration" in a WAIT spec (did you mean "duration_seconds"?); expected one of duration_seconds, until',
      'nodes[0].spec: a WAIT node requires spec.duration_seconds or spec.until',
    ]);
    expect(messages(one('WAIT', { until: '2030-01-01T00:00:00Z' }))).toEqual([]);
  });

  it('refuses unknown WAIT_FOR_EVENT keys: timeout: would otherwise wait forever', () => {
    expect(messages(one('WAIT_FOR_EVENT', { event: 'approved', timeout: 60 }))).toEqual([
      'nodes[0].spec.timeout: unknown field "timeout" in a WAIT_FOR_EVENT spec (did you mean "timeout_seconds"?); expected one of event, timeout_seconds',
    ]);
    expect(messages(one('WAIT_FOR_EVENT', { evnt: 'approved' }))).toEqual([
      'nodes[0].spec.evnt: unknown field "evnt" in a WAIT_FOR_EVENT spec (did you mean "event"?); expected one of event, timeout_seconds',
      'nodes[0].spec.event: a WAIT_FOR_EVENT node requires spec.event (a non-empty string)',
    ]);
  });

  it('refuses unknown SUBWORKFLOW and JOIN keys', () => {
    expect(messages(one('SUBWORKFLOW', { workflw: 'payment', input: {} }))).toEqual([
      'nodes[0].spec.workflw: unknown field "workflw" in a SUBWORKFLOW spec (did you mean "workflow"?); expected one of workflow, version, input, config',
      'nodes[0].spec.workflow: a SUBWORKFLOW node requires spec.workflow (a non-empty string)',
    ]);
    expect(messages(one('JOIN', { reducer: { total: 'add' } }))).toEqual([
      'nodes[0].spec.reducer: unknown field "reducer" in a JOIN spec (did you mean "reducers"?); expected one of reducers',
    ]);
  });

  it('compares keys without case, "_" or "-": timeoutSeconds points at timeout_seconds', () => {
    expect(messages(one('WAIT_FOR_EVENT', { event: 'go', timeoutSeconds: 5 }))).toEqual([
      'nodes[0].spec.timeoutSeconds: unknown field "timeoutSeconds" in a WAIT_FOR_EVENT spec (did you mean "timeout_seconds"?); expected one of event, timeout_seconds',
    ]);
  });
});

describe('CODE specs: the handler input is free, the limits are not', () => {
  const code = 'def handler(input): return input';

  it('passes any other key to the handler, including ones close to nothing the executor reads', () => {
    expect(
      messages(one('CODE', { code, order: '{{input.order}}', items: [1], mode: 'fast', timeout_seconds: 10, memory_mb: 512 }, { runtime: 'python' })),
    ).toEqual([]);
  });

  it('refuses a near miss of memory_mb or timeout_seconds, which would leave the default limit in place', () => {
    const why = "the spec's other fields than code, timeout_seconds, memory_mb are the handler's input, so a near miss of a limit is refused";
    expect(messages(one('CODE', { code, memory: 1024, timeoutSeconds: 90 }, { runtime: 'python' }))).toEqual([
      `nodes[0].spec.memory: unknown field "memory" in a CODE spec (did you mean "memory_mb"?): ${why}; to hand "memory" to the handler, nest it under another field`,
      `nodes[0].spec.timeoutSeconds: unknown field "timeoutSeconds" in a CODE spec (did you mean "timeout_seconds"?): ${why}; to hand "timeoutSeconds" to the handler, nest it under another field`,
    ]);
  });

  it('names a misspelt code key in the problem of the missing code', () => {
    expect(messages(one('CODE', { cod: code }, { runtime: 'python' }))).toEqual([
      'nodes[0].spec.code: a CODE node requires spec.code (a non-empty string); spec.cod is not it (did you mean "code"?)',
    ]);
  });

  it('requires a runtime, which the executor needs, and suggests one for a typo', () => {
    expect(messages(one('CODE', { code }))).toEqual(['nodes[0].runtime: a CODE node requires runtime (one of python, js, node)']);
    expect(messages(one('CODE', { code }, { runtime: 'pyhton' }))).toEqual([
      'nodes[0].runtime: unknown CODE runtime "pyhton" (did you mean "python"?); expected one of python, js, node',
    ]);
  });
});

describe('node fields that would be ignored are refused', () => {
  it('refuses a FORK spec that holds anything and a SWITCH spec key other than default, and accepts an empty one', () => {
    const def = {
      nodes: [
        { node_id: 'f', type: 'FORK', spec: { branches: 2 } },
        { node_id: 's', type: 'SWITCH', spec: { condition: '{{true}}' } },
        { node_id: 'g', type: 'FORK', spec: {} },
      ],
      edges: [
        { from: 'f', to: 's' },
        { from: 's', to: 'g' },
      ],
    };
    expect(messages(def)).toEqual([
      'nodes[0].spec: a FORK node takes no spec',
      'nodes[1].spec.condition: unknown field "condition" in a SWITCH spec (its conditions go on its outgoing edges: {from, to, condition}); expected one of default',
    ]);
  });

  it('refuses a runtime on a node that runs no code', () => {
    expect(messages(one('HTTP', { url: 'https://x' }, { runtime: 'python' }))).toEqual([
      'nodes[0].runtime: runtime applies to CODE nodes only, not to an HTTP node',
    ]);
  });

  it('suggests the node key a misspelt one stands for, as for spec keys', () => {
    const problems = validateDefinition(one('HTTP', { url: 'https://x' }, { retyr: { max_attempts: 2 }, 'for-each': '{{input.xs}}' }));
    expect(problems.map((p) => [p.nodeId, p.path, p.message.split(';')[0]])).toEqual([
      ['charge', 'nodes[0].retyr', 'unknown field "retyr" (did you mean "retry"?)'],
      ['charge', 'nodes[0].for-each', 'unknown field "for-each" (did you mean "for_each"?)'],
    ]);
  });
});

describe('suggestKey', () => {
  it('counts insertions, deletions, substitutions and swaps of neighbours as one edit each', () => {
    expect(editDistance('methd', 'method')).toBe(1);
    expect(editDistance('hedaers', 'headers')).toBe(1);
    expect(editDistance('FETCH', 'PATCH')).toBe(2);
    expect(editDistance('', 'url')).toBe(3);
    expect(editDistance('abcdef', 'uvwxyz', 2)).toBe(3); // stopped once over the limit
  });

  it('suggests a close key, the closest of several, and nothing for a distant or an allowed one', () => {
    expect(suggestKey('methd', ['url', 'method'])).toBe('method');
    expect(suggestKey('FETCH', ['GET', 'PATCH'])).toBeUndefined();
    expect(suggestKey('inputs', ['workflow', 'version', 'input', 'config'])).toBe('input');
    expect(suggestKey('colour', ['url', 'method'])).toBeUndefined();
    expect(suggestKey('url', ['url'])).toBeUndefined();
    expect(suggestKey('time', ['timeout_seconds'])).toBeUndefined(); // too short to be an abbreviation
    expect(suggestKey('Timeout-Seconds', ['event', 'timeout_seconds'])).toBe('timeout_seconds');
  });
});
