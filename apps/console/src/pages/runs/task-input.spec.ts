import { describe, expect, it } from '@jest/globals';
import { splitTaskInput } from './task-input.js';

describe('splitTaskInput', () => {
  it("takes a CODE node's program out of its input and keeps the other keys", () => {
    const program = 'function handler(input) {\n  return input.n + 1;\n}';
    expect(splitTaskInput('CODE', { code: program, n: 2, timeout: '5s' })).toEqual({ input: { n: 2, timeout: '5s' }, code: program });
  });

  it('leaves no input when the program was all there was', () => {
    expect(splitTaskInput('CODE', { code: 'return 1' })).toEqual({ input: null, code: 'return 1' });
  });

  it("keeps other nodes' inputs, and a CODE input without a code string, whole", () => {
    expect(splitTaskInput('HTTP', { code: 'x', url: 'http://127.0.0.1/' })).toEqual({ input: { code: 'x', url: 'http://127.0.0.1/' }, code: null });
    expect(splitTaskInput('CODE', { code: 42 })).toEqual({ input: { code: 42 }, code: null });
    expect(splitTaskInput('CODE', ['code'])).toEqual({ input: ['code'], code: null });
    expect(splitTaskInput('CODE', null)).toEqual({ input: null, code: null });
    expect(splitTaskInput('CODE', undefined)).toEqual({ input: undefined, code: null });
  });
});
