import { describe, expect, it } from '@jest/globals';
import { canonicalJson, lineDiff } from './line-diff.js';

const numbered = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `line ${i + from}`);

describe('lineDiff', () => {
  it('gives up aligning texts too different to diff at once: their common ends kept, the middle removed then added', () => {
    // 20,000 lines each, every one changed: a shortest edit script would cost 40,000 x 40,000 steps.
    const before = ['head', ...numbered(20_000).map((l) => `a ${l}`), 'tail'].join('\n');
    const after = ['head', ...numbered(20_000).map((l) => `b ${l}`), 'tail'].join('\n');
    const d = lineDiff(before, after, 1);
    expect({ aligned: d.aligned, added: d.added, removed: d.removed }).toEqual({ aligned: false, added: 20_000, removed: 20_000 });
    expect(d.rows[0]).toEqual({ kind: 'same', text: 'head', oldLine: 1, newLine: 1 });
    expect(d.rows[1]).toEqual({ kind: 'removed', text: 'a line 1', oldLine: 2 });
    expect(d.rows[20_001]).toEqual({ kind: 'added', text: 'b line 1', newLine: 2 });
    expect(d.rows.at(-1)).toEqual({ kind: 'same', text: 'tail', oldLine: 20_002, newLine: 20_002 });
    expect(lineDiff('a\nb\n', 'a\nc\n').aligned).toBe(true);
  });

  it('numbers added, removed and unchanged lines on their own side', () => {
    const d = lineDiff('a\nb\nc\n', 'a\nB\nc\nd\n');
    expect(d.rows).toEqual([
      { kind: 'same', text: 'a', oldLine: 1, newLine: 1 },
      { kind: 'removed', text: 'b', oldLine: 2 },
      { kind: 'added', text: 'B', newLine: 2 },
      { kind: 'same', text: 'c', oldLine: 3, newLine: 3 },
      { kind: 'added', text: 'd', newLine: 4 },
    ]);
    expect([d.added, d.removed]).toEqual([2, 1]);
  });

  it('folds unchanged lines far from a change, keeping the context around it', () => {
    const before = [...numbered(10), 'old', ...numbered(10, 11)].join('\n');
    const after = [...numbered(10), 'new', ...numbered(10, 11)].join('\n');
    const d = lineDiff(before, after, 2);
    expect(d.rows.map((r) => (r.kind === 'fold' ? `… ${r.count}` : `${r.kind} ${r.text}`))).toEqual([
      '… 8',
      'same line 9',
      'same line 10',
      'removed old',
      'added new',
      'same line 11',
      'same line 12',
      '… 8',
    ]);
  });

  it('shows a single hidden line rather than a fold of one', () => {
    const before = [...numbered(3), 'x', ...numbered(3, 4)].join('\n');
    const after = [...numbered(3), 'y', ...numbered(3, 4)].join('\n');
    expect(lineDiff(before, after, 2).rows.filter((r) => r.kind === 'fold')).toEqual([]);
    expect(lineDiff(before, after, 2).rows).toHaveLength(8);
  });

  it('has no changes for equal texts, a final line break or not', () => {
    const d = lineDiff('a\nb', 'a\nb');
    expect([d.added, d.removed]).toEqual([0, 0]);
    expect(d.rows).toEqual([{ kind: 'fold', count: 2 }]);
  });
});

describe('canonicalJson', () => {
  it('orders keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(canonicalJson({ a: { c: null, d: [{ y: 2, z: 1 }] }, b: 1 }));
    expect(canonicalJson({ b: 1, a: 2 })).toBe('{\n  "a": 2,\n  "b": 1\n}');
  });
});
