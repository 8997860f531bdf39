import { describe, expect, it } from '@jest/globals';
import { isSensitive, trimOutput } from './payload-hygiene.js';

describe('payload hygiene: what of an output is stored and passed on', () => {
  const output = { customer: { id: 7 }, card: '4111-1111', raw: 'x'.repeat(10), total: 250 };

  it('keeps only the listed fields with output_keep, ignoring names the output lacks', () => {
    expect(trimOutput({ output_keep: ['customer', 'total', 'absent'] }, output)).toEqual({ customer: { id: 7 }, total: 250 });
  });

  it('drops the listed fields with output_drop, and applies keep before drop', () => {
    expect(trimOutput({ output_drop: ['card', 'raw'] }, output)).toEqual({ customer: { id: 7 }, total: 250 });
    expect(trimOutput({ output_keep: ['card', 'total'], output_drop: ['card'] }, output)).toEqual({ total: 250 });
  });

  it('stores an output that is not an object as it is, and leaves a node without either list alone', () => {
    expect(trimOutput({ output_keep: ['a'] }, [1, 2])).toEqual([1, 2]);
    expect(trimOutput({ output_drop: ['a'] }, 'text')).toBe('text');
    expect(trimOutput({}, output)).toBe(output);
    expect(trimOutput(undefined, null)).toBeNull();
  });

  it('knows a sensitive node only by sensitive: true', () => {
    expect(isSensitive({ sensitive: true })).toBe(true);
    expect(isSensitive({ sensitive: false })).toBe(false);
    expect(isSensitive(undefined)).toBe(false);
  });
});
