import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The CLI's GraphQL is typed from schema.graphql only when `npm run codegen` reads it: an
 * operation passed to `request` or `subscribe` as a string literal, or an `operation(…)` whose
 * text is not a `/* GraphQL *\/` template, stays untyped (`any`) and unchecked.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'apps/cli/src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sources(path);
    return /\.ts$/.test(e.name) && !/\.(spec|int-spec|e2e-spec)\.ts$/.test(e.name) ? [path] : [];
  });
}

/** `file:line` of each match of `pattern` (global; it may span lines) in the CLI's sources. */
function offending(pattern: RegExp): string[] {
  return sources(CLI).flatMap((path) => {
    const text = readFileSync(path, 'utf8');
    return [...text.matchAll(pattern)].map((m) => `${relative(ROOT, path)}:${text.slice(0, m.index).split('\n').length}`);
  });
}

describe("the CLI's GraphQL operations", () => {
  it('are sent as operation constants, never as string literals', () => {
    expect(sources(CLI).length).toBeGreaterThan(10);
    expect(offending(/\.(request|subscribe)(<[^>]*>)?\(\s*[`'"]/g)).toEqual([]);
  });

  it('are all written where the generator reads them', () => {
    expect(offending(/\boperation<[^>]*>\((?!\/\* GraphQL \*\/ `)/g)).toEqual([]);
  });
});
