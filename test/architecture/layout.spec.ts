import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The layout rules a reader relies on, checked over the source as it is: no source file over 500
 * lines, every SQL statement in libs/persistence, and no comment citing what the repository does
 * not hold. Each rule is also run against a sample that breaks it, so a rule that can no longer
 * fail is noticed.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAX_LINES = 500;

/** Source files (not tests) under `dirs`, relative to the root. */
function sources(dirs: string[], filter = (f: string) => /\.(ts|cjs|py)$/.test(f) && !/\.(spec|int-spec|e2e-spec|testing)\.ts$/.test(f)): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (filter(path)) out.push(relative(ROOT, path));
    }
  };
  for (const d of dirs) walk(join(ROOT, d));
  return out.sort();
}

/** Statement keywords as they open SQL text; what a TypeScript identifier or prose does not start with. */
const SQL =
  /\b(?:SELECT\s+[\w*"(]|(?:INSERT\s+INTO|DELETE\s+FROM|UPDATE\s+[a-z_]+\s+(?:[a-z]\s+)?SET|CREATE\s+(?:TABLE|DATABASE|ROLE|INDEX|FUNCTION)|ALTER\s+(?:TABLE|ROLE|SYSTEM)|DROP\s+(?:TABLE|DATABASE|ROLE))\b)/;
/**
 * What a citation looks like: an issue number, the design notes, the seeds, the stack notes, the
 * style notes or the folder they live in. Assembled from pieces so that this file, which must name them, does not
 * itself match when the repository is searched for them.
 */
const WORDS = {
  issue: ['iss', 'ue'].join(''),
  design: ['DES', 'IGN'].join(''),
  seed: ['se', 'ed'].join(''),
  stack: ['ST', 'ACK'].join(''),
  style: ['ST', 'YLE'].join(''),
};
const CITATION = new RegExp(`${WORDS.issue} [0-9]|${WORDS.design}|${WORDS.seed} 00|${WORDS.stack}|\\b${WORDS.style}\\b|\\.\\.${'/'}shared`);

function overLong(text: string): boolean {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0) > MAX_LINES;
}

function sqlLines(text: string): string[] {
  return text.split('\n').filter((l) => SQL.test(l));
}

describe('the layout', () => {
  it(`keeps every source file under libs/ and apps/ at ${MAX_LINES} lines or fewer`, () => {
    // Generated files (`npm run codegen`) grow with the schema and are not read as code.
    const long = sources(['libs', 'apps'])
      .filter((f) => !f.includes('/generated/'))
      .map((f) => ({ f, text: readFileSync(join(ROOT, f), 'utf8') }))
      .filter(({ text }) => overLong(text))
      .map(({ f, text }) => `${f}: ${text.split('\n').length} lines`);
    expect(long).toEqual([]);
  });

  it('holds every SQL statement of libs/ and apps/ in libs/persistence', () => {
    const found = sources(['libs', 'apps'])
      .filter((f) => !f.startsWith('libs/persistence/'))
      .flatMap((f) => sqlLines(readFileSync(join(ROOT, f), 'utf8')).map((l) => `${f}: ${l.trim()}`));
    expect(found).toEqual([]);
  });

  it('cites no issue number or document the repository does not hold, in code, tests or docs', () => {
    const files = sources(['libs', 'apps', 'test', 'bench', 'chaos', 'examples', 'docs'], (f) => /\.(ts|js|cjs|mjs|py|md|yaml)$/.test(f));
    const found = files.flatMap((f) =>
      readFileSync(join(ROOT, f), 'utf8')
        .split('\n')
        .map((l, i) => ({ l, i }))
        .filter(({ l }) => CITATION.test(l))
        .map(({ l, i }) => `${f}:${i + 1}: ${l.trim()}`),
    );
    expect(found).toEqual([]);
  });

  it('would notice a long file, a statement outside persistence and a citation', () => {
    expect(overLong('x\n'.repeat(MAX_LINES + 1))).toBe(true);
    expect(overLong('x\n'.repeat(MAX_LINES))).toBe(false);
    expect(sqlLines('  const r = await q(`SELECT id FROM runs WHERE tenant_id = $1`);\n  // select the runs\n  UPDATE tasks t SET x = 1')).toHaveLength(2);
    expect(sqlLines('const selected = update(runs); // delete from the list')).toHaveLength(0);
    expect(CITATION.test(`see ${WORDS.issue} 4`)).toBe(true);
    expect(CITATION.test(`the lease (${WORDS.design} §4)`)).toBe(true);
    expect(CITATION.test(`as in ${WORDS.seed} 000`)).toBe(true);
    expect(CITATION.test(`see ${WORDS.stack}.md`)).toBe(true);
    expect(CITATION.test(`(${WORDS.style} "Errors")`)).toBe(true);
    expect(CITATION.test(`from ..${'/'}shared/notes`)).toBe(true);
    expect(CITATION.test('a design review, a stack of seeds, the issues of a queue, the house style')).toBe(false);
  });
});
