import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { WEFT_VERSION } from './weft-version.js';

describe('WEFT_VERSION', () => {
  it('is the version package.json names, which workers register with', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(WEFT_VERSION).toBe(pkg.version);
    expect(WEFT_VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });
});
