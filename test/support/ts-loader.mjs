/**
 * Node module hooks that let a child process run Weft's TypeScript sources directly (no build):
 * `node --import ./test/support/ts-register.mjs some-file.ts`. Each `.ts` file is transpiled on
 * load with `typescript.transpileModule` (decorators and their metadata, as ts-jest does for the
 * suites), `@weft/*` resolve to the libraries' entry points (as tsconfig `paths`), and a relative
 * `./x.js` import from a `.ts` file resolves to `./x.ts`. For test helpers that must run in a
 * separate process (a worker to SIGKILL); production runs the compiled `dist/`.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = new URL('../../', import.meta.url);
const ALIASES = {
  '@weft/engine': 'libs/engine/src/index.ts',
  '@weft/engine/coordinator': 'libs/engine/src/coordinator/index.ts',
  '@weft/persistence': 'libs/persistence/src/index.ts',
  '@weft/platform': 'libs/platform/src/index.ts',
  '@weft/client': 'libs/client/src/index.ts',
  '@weft/api': 'apps/api/src/index.ts',
  '@weft/worker': 'apps/worker/src/index.ts',
  '@weft/scheduler': 'apps/scheduler/src/index.ts',
};
const OPTIONS = {
  module: ts.ModuleKind.ESNext,
  target: ts.ScriptTarget.ES2022,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  useDefineForClassFields: false,
  esModuleInterop: true,
  inlineSourceMap: true,
};

export async function resolve(specifier, context, next) {
  const alias = ALIASES[specifier];
  if (alias) return { url: new URL(alias, root).href, shortCircuit: true };
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const url = new URL(specifier.slice(0, -3) + '.ts', context.parentURL);
    if (existsSync(fileURLToPath(url))) return { url: url.href, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const fileName = fileURLToPath(url);
  const { outputText } = ts.transpileModule(await readFile(fileName, 'utf8'), { fileName, compilerOptions: OPTIONS });
  return { format: 'module', source: outputText, shortCircuit: true };
}
