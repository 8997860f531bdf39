import { describe, expect, it } from '@jest/globals';
import { fencedWrite, GATE, type WritePart, type WriteFence } from './write-batch.js';

const TENANT = '00000000-0000-4000-8000-000000000001';
const RUN = '00000000-0000-4000-8000-000000000002';
const fence = (seq: number): WriteFence => ({
  seq,
  taskId: '00000000-0000-4000-8000-000000000003',
  attempt: 0,
  leaseToken: 'AAAAAAAA-0000-4000-8000-000000000004',
});

const update = (value: string, checked: boolean): WritePart => ({
  text: `UPDATE t SET v = $2 WHERE id = $1`,
  gated: `UPDATE t SET v = $2 WHERE id = $1 AND ${GATE}`,
  params: [RUN, value],
  ...(checked ? { expect: { rows: 1, what: `t ${value}` } } : {}),
});
const insert = (value: string): WritePart => ({
  text: `INSERT INTO u SELECT $1, $2, $3`,
  gated: `INSERT INTO u SELECT $1, $2, $3 WHERE ${GATE}`,
  params: [RUN, value, 7],
});

describe("a fenced statement's text, built once per shape", () => {
  it('is the same string for the same parts with other values, its parameters those of the values', () => {
    const a = fencedWrite(TENANT, RUN, fence(3), [update('x', true), insert('y')])!;
    const b = fencedWrite(TENANT, RUN, fence(4), [update('p', true), insert('q')])!;
    expect(b.text).toBe(a.text);
    // The fence's seven, then each part's own, a checked part's expected count and message after its own.
    expect(b.params).toEqual([
      TENANT,
      RUN,
      4,
      fence(4).taskId,
      0,
      fence(4).leaseToken.toLowerCase(),
      null,
      RUN,
      'p',
      1,
      `run ${RUN}: expected exactly one t p`,
      RUN,
      'q',
      7,
    ]);
    expect(b.text).toContain('$14'); // the last part's third parameter, renumbered after the first part's four
    expect(b.text).not.toContain('$15');
  });

  it('differs when a part is checked or not, comes in another order, or the take is written inline', () => {
    const base = fencedWrite(TENANT, RUN, fence(3), [update('x', true), insert('y')])!.text;
    const unchecked = fencedWrite(TENANT, RUN, fence(3), [update('x', false), insert('y')])!.text;
    const reordered = fencedWrite(TENANT, RUN, fence(3), [insert('y'), update('x', true)])!.text;
    const inline = fencedWrite(TENANT, RUN, fence(3), [update('x', true), insert('y')], 'inline')!.text;
    expect(new Set([base, unchecked, reordered, inline]).size).toBe(4);
    expect(unchecked).not.toContain('weft_expect_rows');
    expect(reordered.indexOf('INSERT INTO u')).toBeLessThan(reordered.indexOf('UPDATE t'));
  });
});
