import { describe, expect, it } from '@jest/globals';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The import rules of `.dependency-cruiser.cjs` (no cycles; the pure engine's layers import only
 * downward and nothing with I/O; node kinds do not route; the coordinator holds no driver and
 * the engine's entry point loads no coordinator; persistence stands alone; the contract imports
 * nothing), checked
 * over libs/ and apps/ as they are. The same rules also run over fixtures/, a small tree laid
 * out like the repository whose files break each rule once, so a rule that can no longer fail
 * is noticed.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = join(ROOT, 'test/architecture/fixtures');

/** Cruises `paths` (relative to `baseDir`) with the repository's rules. */
async function cruiseWithRules(paths: string[], baseDir: string): Promise<ICruiseResult> {
  const options: ICruiseOptions = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.cjs'));
  const tsConfigFile = join(ROOT, 'tsconfig.json');
  const { output } = await cruise(paths, { ...options, baseDir, tsConfig: { fileName: tsConfigFile } }, {}, { tsConfig: extractTSConfig(tsConfigFile) });
  if (typeof output === 'string') throw new Error(`dependency-cruiser returned text instead of a result: ${output.slice(0, 200)}`);
  return output;
}

/** A resolved module path, or for a file inside a package, the package's name. */
function moduleName(path: string): string {
  return path.replace(/^.*node_modules\/((?:@[^/]+\/)?[^/]+).*$/, '$1');
}

/**
 * Each violation as one line: the rule, the importing file, the imported one (a package by its
 * name) and, for a cycle, the whole cycle. Sorted.
 */
function violations(result: ICruiseResult): string[] {
  return result.summary.violations
    .map((v) => {
      const cycle = v.cycle ? ` (cycle: ${[v.from, ...v.cycle.map((c) => c.name)].join(' → ')})` : '';
      return `${v.rule.name}: ${v.from} → ${moduleName(v.to)}${cycle}`;
    })
    .sort();
}

describe('the import rules', () => {
  it('hold over libs/ and apps/', async () => {
    const result = await cruiseWithRules(['libs', 'apps'], ROOT);
    // A file the rules cannot see into proves nothing: every import must resolve.
    const unresolved = result.modules.flatMap((m) => m.dependencies.filter((d) => d.couldNotResolve).map((d) => `${m.source} → ${d.module}`));
    expect(unresolved).toEqual([]);
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    expect(violations(result)).toEqual([]);
  });

  it('would notice each kind of violation', async () => {
    const found = violations(await cruiseWithRules(['libs'], FIXTURES));
    const E = 'libs/engine/src';
    expect(found.map((v) => v.replace(/ \(cycle: .*\)$/, ''))).toEqual(
      [
        `no-circular: ${E}/model/cycle-a.ts → ${E}/model/cycle-b.ts`,
        `model-is-the-bottom: ${E}/model/reaches-up.ts → ${E}/statemachine/uses-io.ts`,
        `validation-below-statemachine: ${E}/model/validation/reaches-up.ts → ${E}/statemachine/uses-io.ts`,
        `template-above-model-only: ${E}/template/reaches-up.ts → ${E}/statemachine/uses-io.ts`,
        `cel-only-in-resolver: ${E}/template/reaches-up.ts → @marcbachmann/cel-js`,
        `pure-engine-no-frameworks: ${E}/statemachine/uses-io.ts → @nestjs/common`,
        `pure-engine-no-node-builtins: ${E}/statemachine/uses-io.ts → fs`,
        `pure-engine-no-shell: ${E}/statemachine/uses-io.ts → ${E}/coordinator/shell.ts`,
        `node-kinds-do-not-route: ${E}/statemachine/node-kinds/routes-itself.ts → ${E}/statemachine/routing.ts`,
        `persistence-stands-alone: libs/persistence/src/repository.ts → ${E}/model/cycle-a.ts`,
        `coordinator-holds-no-driver: ${E}/coordinator/shell.ts → typeorm`,
        `coordinator-reads-the-pure-engine-through-its-entry: ${E}/coordinator/shell.ts → ${E}/model/cycle-a.ts`,
        `engine-entry-loads-no-coordinator: ${E}/index.ts → ${E}/coordinator/shell.ts`,
        `contract-imports-nothing: libs/contract/src/limits.ts → fs`,
      ].sort(),
    );
    expect(found).toContain(
      `no-circular: ${E}/model/cycle-a.ts → ${E}/model/cycle-b.ts (cycle: ${E}/model/cycle-a.ts → ${E}/model/cycle-b.ts → ${E}/model/cycle-a.ts)`,
    );
  });
});
