import { describe, expect, it } from '@jest/globals';
import { runFlowOf } from '../flow-control.js';
import { loadDefinition, parseDefinition, validateDefinition } from '../validate.js';

/** Each problem as `path: message`. */
const messages = (def: unknown): string[] => validateDefinition(def).map((p) => `${p.path}: ${p.message}`);

/** A definition of `charge` (HTTP, with `extra` fields) → `notify` (CODE), with top-level `top` fields. */
function flow(top: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown {
  return {
    ...top,
    nodes: [
      { node_id: 'charge', type: 'HTTP', spec: { url: 'https://pay.example.com/{{ input.account }}' }, ...extra },
      { node_id: 'notify', type: 'CODE', runtime: 'python', spec: { code: 'def main(x): return x' } },
    ],
    edges: [{ from: 'charge', to: 'notify' }],
  };
}

describe('flow control at publish', () => {
  it('accepts every documented key, on the workflow and on HTTP and CODE nodes', () => {
    const def = {
      concurrency: { key: 'acct-{{ input.account }}-{{ config.region }}', limit: 2, strategy: 'cancel_oldest', scope: 'tenant' },
      priority: 1,
      nodes: [
        {
          node_id: 'charge',
          type: 'HTTP',
          spec: { url: 'https://x' },
          concurrency: { key: '{{ input.account }}', limit: 1 },
          rate_limit: { key: 'psp', limit: 100, per_seconds: 60 },
        },
        {
          node_id: 'each',
          type: 'CODE',
          runtime: 'js',
          spec: { code: 'x' },
          for_each: '{{ tasks.charge.output.items }}',
          as: 'line',
          concurrency: { key: '{{ line.sku }}-{{ lineIndex }}-{{ tasks.charge.output.id }}', limit: 1000 },
          rate_limit: { limit: 100_000, per_seconds: 86_400 },
        },
      ],
      edges: [{ from: 'charge', to: 'each' }],
    };
    expect(messages(def)).toEqual([]);
    expect(messages(flow({ concurrency: { limit: 1 } }))).toEqual([]);
  });

  it('lists every problem of one definition at once, each with its path', () => {
    const def = flow(
      {
        concurrency: { key: '{{ tasks.charge.output.id }}', limit: 0, strategy: 'cancel_new', scope: 'tenants', limt: 3 },
        priority: 6,
      },
      { concurrency: { key: '{{ input.account', limit: 1.5, strategy: 'queue' }, rate_limit: { limit: 200_000 } },
    );
    expect(messages(def)).toEqual([
      'concurrency.limt: unknown field "limt" in the workflow\'s concurrency (did you mean "limit"?); expected one of key, limit, strategy, scope',
      'concurrency.limit: concurrency.limit must be an integer from 1 to 1000; got 0',
      'concurrency.strategy: unknown concurrency.strategy "cancel_new" (did you mean "cancel_newest"?); expected one of queue, cancel_newest, cancel_oldest',
      'concurrency.scope: unknown concurrency.scope "tenants" (did you mean "tenant"?); expected one of workflow, tenant',
      'concurrency.key: concurrency.key is resolved when a run starts: {{ tasks.charge.output.id }} reads tasks; only input, config may be read here',
      'priority: priority must be an integer from 1 (runs first) to 5; got 6',
      'nodes[0].concurrency.strategy: unknown field "strategy" in a node\'s concurrency; expected one of key, limit',
      'nodes[0].concurrency.limit: concurrency.limit must be an integer from 1 to 1000; got 1.5',
      'nodes[0].concurrency.key: unclosed template: the {{ at column 1 has no closing }}',
      'nodes[0].rate_limit.limit: rate_limit.limit must be an integer from 1 to 100000; got 200000',
      'nodes[0].rate_limit.per_seconds: rate_limit.per_seconds is required (an integer from 1 to 86400)',
    ]);
    expect(
      validateDefinition(def)
        .filter((p) => p.path?.startsWith('nodes[0]'))
        .every((p) => p.nodeId === 'charge'),
    ).toBe(true);
  });

  it('refuses a rate_limit without limit or per_seconds, and per_seconds out of range', () => {
    expect(messages(flow({}, { rate_limit: {} }))).toEqual([
      'nodes[0].rate_limit.limit: rate_limit.limit is required (an integer from 1 to 100000)',
      'nodes[0].rate_limit.per_seconds: rate_limit.per_seconds is required (an integer from 1 to 86400)',
    ]);
    expect(messages(flow({}, { rate_limit: { limit: 5, per_seconds: 86_401 } }))).toEqual([
      'nodes[0].rate_limit.per_seconds: rate_limit.per_seconds must be an integer from 1 to 86400; got 86401',
    ]);
    expect(messages(flow({}, { rate_limit: { limit: 5, per_seconds: '60' } }))).toEqual([
      'nodes[0].rate_limit.per_seconds: rate_limit.per_seconds must be an integer from 1 to 86400; got "60"',
    ]);
  });

  it('refuses a workflow concurrency without limit, a limit over 1000, and non-objects', () => {
    expect(messages(flow({ concurrency: { key: '{{ input.account }}' } }))).toEqual([
      'concurrency.limit: concurrency.limit is required (an integer from 1 to 1000)',
    ]);
    expect(messages(flow({ concurrency: { limit: 1001 } }))).toEqual(['concurrency.limit: concurrency.limit must be an integer from 1 to 1000; got 1001']);
    expect(messages(flow({ concurrency: 5 }))).toEqual(['concurrency: concurrency must be an object {key?, limit, strategy?, scope?}']);
    expect(messages(flow({}, { rate_limit: 5 }))).toEqual(['nodes[0].rate_limit: rate_limit must be an object {key?, limit, per_seconds}']);
  });

  it('refuses concurrency and rate_limit on nodes other than HTTP and CODE, naming the type', () => {
    const def = {
      nodes: [
        { node_id: 'gate', type: 'WAIT', spec: { duration_seconds: 5 }, concurrency: { limit: 1 } },
        { node_id: 'child', type: 'SUBWORKFLOW', spec: { workflow: 'c' }, rate_limit: { limit: 1, per_seconds: 1 } },
      ],
      edges: [{ from: 'gate', to: 'child' }],
    };
    expect(messages(def)).toEqual([
      'nodes[0].concurrency: concurrency applies to HTTP and CODE nodes only, not to a WAIT node',
      'nodes[1].rate_limit: rate_limit applies to HTTP and CODE nodes only, not to a SUBWORKFLOW node',
    ]);
  });

  it('checks a workflow key with the CEL compiler: syntax, and roots other than input and config', () => {
    expect(messages(flow({ concurrency: { key: '{{ input.account + }}', limit: 1 } }))).toEqual([
      expect.stringMatching(/^concurrency\.key: CEL syntax error in \{\{ input\.account \+ \}\}: /) as unknown as string,
    ]);
    expect(messages(flow({ concurrency: { key: '{{ system.now }}', limit: 1 } }))).toEqual([
      'concurrency.key: concurrency.key is resolved when a run starts: {{ system.now }} reads system; only input, config may be read here',
    ]);
    // Variables bound inside the expression are not roots.
    expect(messages(flow({ concurrency: { key: '{{ input.tags.map(t, t + config.suffix).join("-") }}', limit: 1 } }))).toEqual([]);
    expect(messages(flow({ concurrency: { key: '{{ cel.bind(a, input.account, a + "x") }}', limit: 1 } }))).toEqual([]);
    expect(messages(flow({ concurrency: { key: '', limit: 1 } }))).toEqual([
      'concurrency.key: concurrency.key must be a non-empty string (a literal or a {{ }} template)',
    ]);
  });

  it('checks a node key like a spec template: syntax and references to unknown nodes', () => {
    expect(messages(flow({}, { concurrency: { key: '{{ tasks.nope.output }}', limit: 1 } }))).toEqual([
      'nodes[0].concurrency.key: template {{ tasks.nope.output }} references unknown node "nope"',
    ]);
    expect(messages(flow({}, { rate_limit: { key: 42, limit: 1, per_seconds: 1 } }))).toEqual([
      'nodes[0].rate_limit.key: rate_limit.key must be a string; write the number as text: key: "42"',
    ]);
  });

  it('suggests the right key for a near miss, keeping concurrency apart from max_concurrency', () => {
    expect(messages(flow({}, { concurency: { limit: 1 } }))).toEqual([
      expect.stringContaining('nodes[0].concurency: unknown field "concurency" (did you mean "concurrency"?)') as unknown as string,
    ]);
    expect(messages(flow({}, { ratelimit: { limit: 1, per_seconds: 1 } }))).toEqual([
      expect.stringContaining('nodes[0].ratelimit: unknown field "ratelimit" (did you mean "rate_limit"?)') as unknown as string,
    ]);
    expect(messages(flow({ priorty: 2 }))).toEqual([
      expect.stringContaining('priorty: unknown field "priorty" (did you mean "priority"?)') as unknown as string,
    ]);
    expect(messages(flow({}, { max_concurrency: 2 }))).toEqual([
      'nodes[0].max_concurrency: max_concurrency applies to a for_each node only; this node has no for_each (to cap how many of its tasks run at once across runs, use concurrency: {limit})',
    ]);
    expect(messages(flow({}, { rate_limit: { limit: 1, per_second: 1 } }))).toEqual([
      'nodes[0].rate_limit.per_second: unknown field "per_second" in a node\'s rate_limit (did you mean "per_seconds"?); expected one of key, limit, per_seconds',
      'nodes[0].rate_limit.per_seconds: rate_limit.per_seconds is required (an integer from 1 to 86400)',
    ]);
  });

  it('names an unquoted YAML template in a key as a map to quote, on the workflow and on a node', () => {
    const source = [
      'concurrency: {key: {{ input.customer }}, limit: 1}',
      'nodes:',
      '  - node_id: charge',
      '    type: HTTP',
      '    spec: {url: "https://x"}',
      '    concurrency:',
      '      key: {{input.account}}',
      '      limit: 1',
      '    rate_limit: {key: {{ config.partner }}, limit: 5, per_seconds: 1}',
    ].join('\n');
    const problems = validateDefinition(parseDefinition(source));
    expect(problems).toEqual([
      {
        path: 'concurrency.key',
        message: 'concurrency.key must be a string; YAML read the unquoted template {{ input.customer }} as a map: quote it, key: "{{ input.customer }}"',
      },
      {
        nodeId: 'charge',
        path: 'nodes[0].concurrency.key',
        message: 'concurrency.key must be a string; YAML read the unquoted template {{ input.account }} as a map: quote it, key: "{{ input.account }}"',
      },
      {
        nodeId: 'charge',
        path: 'nodes[0].rate_limit.key',
        message: 'rate_limit.key must be a string; YAML read the unquoted template {{ config.partner }} as a map: quote it, key: "{{ config.partner }}"',
      },
    ]);
    // Any other map is not a string either, without the hint.
    expect(messages(flow({ concurrency: { key: { a: 1 }, limit: 1 } }))).toEqual([
      'concurrency.key: concurrency.key must be a non-empty string (a literal or a {{ }} template)',
    ]);
  });

  it('asks for a literal number key as text', () => {
    expect(validateDefinition(parseDefinition('concurrency: {key: 12, limit: 1}\nnodes: []'))).toContainEqual({
      path: 'concurrency.key',
      message: 'concurrency.key must be a string; write the number as text: key: "12"',
    });
  });

  it('hints to quote an unquoted template that YAML cannot parse at all', () => {
    const source = 'concurrency:\n  key: {{ input.customer }}-eu\n  limit: 1\nnodes: [{node_id: a, type: HTTP, spec: {url: "https://x"}}]\n';
    expect(() => parseDefinition(source)).toThrow(
      expect.objectContaining({
        problems: [
          expect.objectContaining({
            message: expect.stringMatching(
              /^YAML syntax error: .*; a value that starts with \{\{ must be quoted in YAML, e.g. key: "\{\{ input.customer \}\}"$/,
            ),
          }),
        ],
      }) as unknown as Error,
    );
    // A quoted template parses.
    expect(() => parseDefinition(source.replace('{{ input.customer }}-eu', '"{{ input.customer }}-eu"'))).not.toThrow();
  });

  it('refuses a literal key over 256 characters at publish, with its path; a template is checked when it resolves', () => {
    const long = 'k'.repeat(257);
    expect(messages(flow({ concurrency: { key: long, limit: 1 } }))).toEqual(['concurrency.key: concurrency.key is 257 characters; at most 256']);
    expect(messages(flow({}, { rate_limit: { key: long, limit: 1, per_seconds: 1 }, concurrency: { key: long, limit: 1 } }))).toEqual([
      'nodes[0].concurrency.key: concurrency.key is 257 characters; at most 256',
      'nodes[0].rate_limit.key: rate_limit.key is 257 characters; at most 256',
    ]);
    expect(messages(flow({ concurrency: { key: 'k'.repeat(256), limit: 1 } }))).toEqual([]);
    expect(messages(flow({ concurrency: { key: `${long}{{ input.a }}`, limit: 1 } }))).toEqual([]);
  });

  it('refuses a priority that is not an integer from 1 to 5', () => {
    expect(messages(flow({ priority: 0 }))).toEqual(['priority: priority must be an integer from 1 (runs first) to 5; got 0']);
    expect(messages(flow({ priority: 2.5 }))).toEqual(['priority: priority must be an integer from 1 (runs first) to 5; got 2.5']);
    expect(messages(flow({ priority: 'high' }))).toEqual(['priority: priority must be an integer from 1 (runs first) to 5; got "high"']);
    expect(messages(flow({ priority: 5 }))).toEqual([]);
  });
});

describe('runFlowOf: the defaults of a published definition', () => {
  it('fills strategy queue, scope workflow and priority 3', () => {
    const def = loadDefinition(`
concurrency: {limit: 4}
nodes: [{node_id: a, type: HTTP, spec: {url: "https://x"}}]
`);
    expect(runFlowOf(def)).toEqual({ concurrency: { key: undefined, limit: 4, strategy: 'queue', scope: 'workflow' }, priority: 3 });
  });

  it('keeps what the definition says, and has no concurrency without one', () => {
    expect(runFlowOf({ concurrency: { key: '{{ input.a }}', limit: 1, strategy: 'cancel_newest', scope: 'tenant' }, priority: 1 })).toEqual({
      concurrency: { key: '{{ input.a }}', limit: 1, strategy: 'cancel_newest', scope: 'tenant' },
      priority: 1,
    });
    expect(runFlowOf({})).toEqual({ priority: 3 });
  });
});
