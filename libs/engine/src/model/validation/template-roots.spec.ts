import { describe, expect, it } from '@jest/globals';
import { validateDefinition } from '../validate.js';

/** Each problem as `path: message`. */
const messages = (def: unknown): string[] => validateDefinition(def).map((p) => `${p.path}: ${p.message}`);

/** a → b, b an HTTP node with `url` and any other node fields. */
function withUrl(url: string, extra: Record<string, unknown> = {}): unknown {
  return {
    nodes: [
      { node_id: 'a', type: 'HTTP', spec: { url: 'https://x' } },
      { node_id: 'b', type: 'HTTP', spec: { url }, ...extra },
    ],
    edges: [{ from: 'a', to: 'b' }],
  };
}

describe('template roots are checked at publish', () => {
  it('refuses a misspelt root with its path and the root it stands for', () => {
    expect(messages(withUrl('https://x/{{inpt.order_id}}'))).toEqual([
      'nodes[1].spec.url: unknown template root "inpt" in {{inpt.order_id}}; did you mean "input"?',
    ]);
    expect(messages(withUrl('{{ taks.a.output.url }}'))).toEqual([
      'nodes[1].spec.url: unknown template root "taks" in {{ taks.a.output.url }}; did you mean "tasks"?',
    ]);
  });

  it('lists the roots when none is close', () => {
    expect(messages(withUrl('{{secrets.token}}'))).toEqual([
      'nodes[1].spec.url: unknown template root "secrets" in {{secrets.token}}; a template reads input, config, tasks, system',
    ]);
  });

  it('accepts input, config, tasks and system, and variables bound inside the expression', () => {
    const url = '{{input.a}}{{config.b}}{{tasks.a.output.c}}{{system.now}}{{input.xs.map(x, x + 1).size()}}{{input.xs.exists(y, y > config.min)}}';
    expect(messages(withUrl(url))).toEqual([]);
    expect(messages(withUrl('{{cel.bind(v, input.a, v + 1)}}'))).toEqual([]);
  });

  it('does not take a comprehension variable for a root outside its comprehension', () => {
    expect(messages(withUrl('{{input.xs.map(x, x + 1).size() + x}}'))).toEqual([
      'nodes[1].spec.url: unknown template root "x" in {{input.xs.map(x, x + 1).size() + x}}; a template reads input, config, tasks, system',
    ]);
  });

  it("accepts a for_each node's alias, <as>Index and <as>Count in its own spec only", () => {
    const fanned = { for_each: '{{input.items}}', as: 'emp' };
    expect(messages(withUrl('https://x/{{emp.id}}?i={{empIndex}}&n={{empCount}}', fanned))).toEqual([]);
    expect(messages(withUrl('https://x/{{item.id}}', { for_each: '{{input.items}}' }))).toEqual([]);
    expect(messages(withUrl('https://x/{{item.id}}'))).toEqual([
      'nodes[1].spec.url: unknown template root "item" in {{item.id}}; a template reads input, config, tasks, system',
    ]);
    expect(messages(withUrl('https://x', { for_each: '{{emp.items}}', as: 'emp' }))).toEqual([
      'nodes[1].for_each: unknown template root "emp" in {{emp.items}}; a template reads input, config, tasks, system',
    ]);
  });

  it('refuses run outside the finally node, saying where it is read', () => {
    expect(messages(withUrl('{{run.id}}'))).toEqual([
      'nodes[1].spec.url: unknown template root "run" in {{run.id}}; only the finally step\'s templates may read run (run.id, run.status, run.error: the run\'s decided outcome)',
    ]);
  });

  it('checks edge conditions and the run output too', () => {
    const def = {
      nodes: [
        { node_id: 'a', type: 'HTTP', spec: { url: 'https://x' } },
        { node_id: 'b', type: 'HTTP', spec: { url: 'https://x' } },
      ],
      edges: [{ from: 'a', to: 'b', condition: '{{tasks.a.output.ok && confg.on}}' }],
      output: { id: '{{inputs.id}}' },
    };
    expect(messages(def)).toEqual([
      'edges[0].condition: unknown template root "confg" in {{tasks.a.output.ok && confg.on}}; did you mean "config"?',
      'output.id: unknown template root "inputs" in {{inputs.id}}; did you mean "input"?',
    ]);
  });
});
