/**
 * Node module hooks that let a child process run Weft's TypeScript sources directly (no build):
 * `node --import ./test/support/ts-register.mjs some-file.ts`. Each `.ts` file is transpiled on
 * load with `typescript.transpileModule` (decorators and their metadata, as
 * test/support/ts-transform.cjs does for the suites), `@weft/*` resolve to the libraries' entry
 * points (as tsconfig `paths`), and a relative `./x.js` import from a `.ts` file resolves to
 * `./x.ts`. For test helpers that must run in a
 * separate process (a worker to SIGKILL); production runs the compiled `dist/`.
 *
 * Transpiled output is kept in `<os tmpdir>/weft-ts-loader/`, keyed by a hash of the file's path
 * and source, the compiler options and the TypeScript version: a suite spawns many processes
 * over the same sources, and transpiling the ~200 files a worker imports costs seconds each
 * time. TypeScript itself is loaded only when a file is not in the cache yet. Entries are written
 * to a temporary file and renamed into place, so processes starting at once never read half of one.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = new URL('../../', import.meta.url);
const ALIASES = {
  '@weft/engine': 'libs/engine/src/index.ts',
  '@weft/engine/coordinator': 'libs/engine/src/coordinator/index.ts',
  '@weft/persistence': 'libs/persistence/src/index.ts',
  '@weft/platform': 'libs/platform/src/index.ts',
  '@weft/client': 'libs/client/src/index.ts',
  '@weft/contract': 'libs/contract/src/index.ts',
  '@weft/api': 'apps/api/src/index.ts',
  '@weft/worker': 'apps/worker/src/index.ts',
  '@weft/scheduler': 'apps/scheduler/src/index.ts',
  '@weft/cli': 'apps/cli/src/index.ts',
};
/** The compiler options by name; `compilerOptions` maps the enums once TypeScript is loaded. */
const OPTIONS = {
  module: 'ESNext',
  target: 'ES2022',
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  useDefineForClassFields: false,
  esModuleInterop: true,
  inlineSourceMap: true,
};
const TS_VERSION = JSON.parse(readFileSync(fileURLToPath(new URL('node_modules/typescript/package.json', root)), 'utf8')).version;
const CACHE_DIR = join(tmpdir(), 'weft-ts-loader');

let typescript;
async function transpile(source, fileName) {
  typescript ??= (await import('typescript')).default;
  const ts = typescript;
  const compilerOptions = { ...OPTIONS, module: ts.ModuleKind[OPTIONS.module], target: ts.ScriptTarget[OPTIONS.target] };
  return ts.transpileModule(source, { fileName, compilerOptions }).outputText;
}

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
  const source = await readFile(fileName, 'utf8');
  const key = createHash('sha256')
    .update(TS_VERSION)
    .update('\0')
    .update(JSON.stringify(OPTIONS))
    .update('\0')
    .update(fileName)
    .update('\0')
    .update(source)
    .digest('hex');
  const cached = join(CACHE_DIR, `${key}.js`);
  const hit = await readFile(cached, 'utf8').catch(() => undefined);
  if (hit !== undefined) return { format: 'module', source: hit, shortCircuit: true };
  const outputText = await transpile(source, fileName);
  // A cache that cannot be written (read-only tmp, full disk) only costs the next process time.
  await mkdir(CACHE_DIR, { recursive: true })
    .then(async () => {
      const temp = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
      await writeFile(temp, outputText);
      await rename(temp, cached);
    })
    .catch(() => undefined);
  return { format: 'module', source: outputText, shortCircuit: true };
}
