/**
 * Jest's transformer for the repository's TypeScript: `typescript.transpileModule` with the
 * compiler options of tsconfig.json, emitting ES modules (the suites run in Jest's native ESM
 * mode). Each file is transpiled on its own, as ts-jest does with `isolatedModules`, but without
 * ts-jest's per-file module-format lookup, and with a cache key that depends only on the file,
 * the options and the TypeScript version, so the three Jest projects (unit, integration,
 * browser), which share one `id` in jest.config.js, transpile each file once between them.
 * Type checking is `npm run typecheck`'s job; a syntax error still fails the suite here.
 */
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const ts = require('typescript');

const ROOT = join(__dirname, '..', '..');
const TSCONFIG = join(ROOT, 'tsconfig.json');

function compilerOptions() {
  const { config, error } = ts.readConfigFile(TSCONFIG, ts.sys.readFile);
  if (error) throw new Error(`${TSCONFIG}: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`);
  const { options, errors } = ts.convertCompilerOptionsFromJson(config.compilerOptions ?? {}, ROOT, TSCONFIG);
  if (errors.length > 0) throw new Error(`${TSCONFIG}: ${errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, '\n')).join('; ')}`);
  // Paths of the build's output: the source map's `sources` then name the file beside it.
  delete options.outDir;
  delete options.rootDir;
  return {
    ...options,
    // One file at a time, to ES modules, with a separate source map Jest keeps beside the code.
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    isolatedModules: true,
    noEmit: false,
    declaration: false,
    sourceMap: true,
    inlineSourceMap: false,
    inlineSources: true,
  };
}

const OPTIONS = compilerOptions();
const KEY = createHash('sha256').update(ts.version).update('\0').update(JSON.stringify(OPTIONS)).update('\0').update(readFileSync(__filename)).digest('hex');

module.exports = {
  getCacheKey(source, filePath, transformOptions) {
    return createHash('sha256')
      .update(KEY)
      .update('\0')
      .update(String(transformOptions.supportsStaticESM))
      .update('\0')
      .update(filePath)
      .update('\0')
      .update(source)
      .digest('hex');
  },
  process(source, filePath) {
    const out = ts.transpileModule(source, { fileName: filePath, compilerOptions: OPTIONS, reportDiagnostics: true });
    const errors = (out.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length > 0) {
      throw new Error(
        errors
          .map((d) => {
            const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
            return `${filePath}${at ? `:${at.line + 1}:${at.character + 1}` : ''}: TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
          })
          .join('\n'),
      );
    }
    return { code: out.outputText.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'), map: out.sourceMapText };
  },
};
