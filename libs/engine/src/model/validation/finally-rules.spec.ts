import { describe, expect, it } from '@jest/globals';
import { validateDefinition } from '../validate.js';

/** Each problem as `path: message`. */
const messages = (def: unknown): string[] => validateDefinition(def).map((p) => `${p.path}: ${p.message}`);

/** a → b with `fin` as its finally step and `extra` top-level fields. */
function withFinally(fin: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    nodes: [
      { node_id: 'a', type: 'HTTP', spec: { url: 'https://x/a' } },
      { node_id: 'b', type: 'HTTP', spec: { url: 'https://x/b' } },
    ],
    edges: [{ from: 'a', to: 'b' }],
    finally: fin,
    ...extra,
  };
}

const cleanup = {
  node_id: 'cleanup',
  type: 'HTTP',
  spec: {
    url: 'https://x/cleanup',
    body: { status: '{{ run.status }}', error: '{{ run.error }}', id: '{{ run.id }}', a: '{{ tasks.a.output }}', in: '{{ input.k }}' },
  },
  retry: { max_attempts: 3 },
};

describe('the finally step at publish', () => {
  it('accepts an HTTP or CODE step reading run, input, config and tasks', () => {
    expect(messages(withFinally(cleanup))).toEqual([]);
    expect(messages(withFinally({ node_id: 'c', type: 'CODE', runtime: 'python', spec: { code: 'def main(x): return x', s: '{{ run.status }}' } }))).toEqual(
      [],
    );
  });

  it('refuses a node_id a node has, a type other than HTTP or CODE, and a non-object', () => {
    expect(messages(withFinally({ ...cleanup, node_id: 'b' }))).toEqual(['finally.node_id: duplicate node_id "b" (first declared at nodes[1])']);
    expect(messages(withFinally({ node_id: 'w', type: 'WAIT', spec: { duration_seconds: 1 } }))).toEqual([
      'finally.type: the finally step must be an HTTP or CODE node; got "WAIT"',
    ]);
    expect(messages(withFinally('cleanup'))).toEqual(['finally: finally must be a node object {node_id, type: HTTP or CODE, spec, retry?, …}']);
  });

  it('refuses for_each and on_exhausted, and unknown fields', () => {
    const because = "does not apply to the finally step: it runs one task, once the run's outcome is decided";
    expect(messages(withFinally({ ...cleanup, for_each: '{{ input.items }}', on_exhausted: 'pause' }))).toEqual([
      `finally.for_each: for_each ${because}`,
      `finally.on_exhausted: on_exhausted ${because}`,
    ]);
    expect(messages(withFinally({ ...cleanup, colour: 'red' }))).toEqual([expect.stringMatching(/^finally\.colour: unknown field "colour"/)]);
  });

  it('refuses an edge naming it, once per end, and nothing else about that edge', () => {
    const def = withFinally(cleanup);
    def.edges = [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'cleanup' },
      { from: 'cleanup', to: 'a' },
    ];
    expect(messages(def)).toEqual([
      `edges[1].to: edge to the finally step "cleanup": no edge may name it (it runs on its own once the run's outcome is decided)`,
      `edges[2].from: edge from the finally step "cleanup": no edge may name it (it runs on its own once the run's outcome is decided)`,
    ]);
  });

  it('checks its spec as an HTTP spec and its templates, at finally paths', () => {
    expect(messages(withFinally({ ...cleanup, spec: { url: 'https://x', body: '{{ tasks.nope.output }}' } }))).toEqual([
      'finally.spec.body: template {{ tasks.nope.output }} references unknown node "nope"',
    ]);
    expect(messages(withFinally({ node_id: 'c', type: 'HTTP', spec: {} }))[0]).toMatch(/^finally\.spec\.url: /);
  });

  it('refuses run in any other template, saying only the finally step may read it', () => {
    const def = withFinally(undefined, { output: { s: '{{ run.status }}' } });
    delete def.finally;
    (def.nodes as Array<Record<string, unknown>>)[1].spec = { url: 'https://x/{{ run.id }}', body: '{{ input.run }} and "{{ \'run\' }}"' };
    expect(messages(def)).toEqual([
      // input.run and a string 'run' are not the variable
      'nodes[1].spec.url: unknown template root "run" in {{ run.id }}; only the finally step\'s templates may read run (run.id, run.status, run.error: the run\'s decided outcome)',
      'output.s: unknown template root "run" in {{ run.status }}; only the finally step\'s templates may read run (run.id, run.status, run.error: the run\'s decided outcome)',
    ]);
  });

  it('refuses a for_each alias named run', () => {
    const def = { nodes: [{ node_id: 'n', type: 'HTTP', spec: { url: 'https://x' }, for_each: '{{ input.items }}', as: 'run' }], edges: [] };
    expect(messages(def)[0]).toMatch(/^nodes\[0\]\.as: as must be a name .* other than input, config, tasks, system, run/);
  });
});
