import { describe, expect, it } from '@jest/globals';
import { validateDefinition } from '../validate.js';

/** Each problem as `path: message`. */
const messages = (def: unknown): string[] => validateDefinition(def).map((p) => `${p.path}: ${p.message}`);

/** a → s (SWITCH with `spec`) → ok / fallback, with the given edges out of s. */
function switchDef(spec: unknown, out: unknown[]): unknown {
  return {
    nodes: [
      { node_id: 'a', type: 'HTTP', spec: { url: 'https://x' } },
      { node_id: 's', type: 'SWITCH', spec },
      { node_id: 'ok', type: 'HTTP', spec: { url: 'https://x' } },
      { node_id: 'fallback', type: 'HTTP', spec: { url: 'https://x' } },
    ],
    edges: [{ from: 'a', to: 's' }, ...out],
  };
}

const OK = { from: 's', to: 'ok', condition: '{{tasks.a.output.ok}}' };

describe('a SWITCH spec.default', () => {
  it('accepts a default reached by an unconditioned edge when every other edge has a condition', () => {
    expect(messages(switchDef({ default: 'fallback' }, [OK, { from: 's', to: 'fallback' }]))).toEqual([]);
  });

  it('keeps the rules of a SWITCH without default: an unconditioned edge is allowed, an error edge refused', () => {
    expect(messages(switchDef(undefined, [OK, { from: 's', to: 'fallback' }]))).toEqual([]);
    expect(messages(switchDef({}, [OK, { from: 's', to: 'fallback', on_error: true }]))).toEqual([
      'edges[2].on_error: on_error edge leaving a SWITCH node ("s"), which never fails; it would never be taken',
    ]);
  });

  it('refuses a default that is not a successor, with a hint to add the edge or a near id', () => {
    expect(messages(switchDef({ default: 'fallback' }, [OK, { from: 'ok', to: 'fallback' }]))).toEqual([
      'nodes[1].spec.default: spec.default "fallback" is not a successor of SWITCH s; add an edge {from: s, to: fallback} without a condition',
    ]);
    expect(messages(switchDef({ default: 'falback' }, [OK, { from: 's', to: 'fallback' }]))).toEqual([
      'nodes[1].spec.default: spec.default "falback" is not a successor of SWITCH s (did you mean "fallback"?)',
    ]);
  });

  it('does not suggest an edge that would close a cycle for a default naming the SWITCH or a node before it', () => {
    const other = { from: 's', to: 'fallback', condition: '{{true}}' };
    expect(messages(switchDef({ default: 's' }, [OK, other]))).toEqual([
      'nodes[1].spec.default: spec.default "s" is not a successor of SWITCH s; it names the SWITCH itself: name one of its successors (ok, fallback)',
    ]);
    expect(messages(switchDef({ default: 'a' }, [OK, other]))).toEqual([
      'nodes[1].spec.default: spec.default "a" is not a successor of SWITCH s; an edge {from: s, to: a} would close a cycle (a leads to s): name one of its successors (ok, fallback)',
    ]);
  });

  it('refuses a default that is not a node id', () => {
    expect(messages(switchDef({ default: 3 }, [OK, { from: 's', to: 'fallback' }]))).toEqual([
      "nodes[1].spec.default: a SWITCH's spec.default must be the id of one of its successors (ok, fallback)",
    ]);
  });

  it("refuses a condition on the default's edge and an unconditioned other edge", () => {
    expect(messages(switchDef({ default: 'fallback' }, [OK, { from: 's', to: 'fallback', condition: '{{true}}' }]))).toEqual([
      "edges[2].condition: the edge s → fallback leads to the SWITCH's default, which is taken when no other condition holds; remove its condition",
    ]);
    expect(
      messages(
        switchDef({ default: 'fallback' }, [
          { from: 's', to: 'ok' },
          { from: 's', to: 'fallback' },
        ]),
      ),
    ).toEqual(['edges[1]: the edge s → ok has no condition, so it is always taken and the default "fallback" never would be; give it a condition']);
  });

  it('refuses other spec keys', () => {
    expect(messages(switchDef({ default: 'fallback', otherwise: 'ok' }, [OK, { from: 's', to: 'fallback' }]))).toEqual([
      'nodes[1].spec.otherwise: unknown field "otherwise" in a SWITCH spec (its conditions go on its outgoing edges: {from, to, condition}); expected one of default',
    ]);
  });
});
