/**
 * Import rules for libs/ and apps/, checked by `npx depcruise libs apps` and by
 * test/architecture/imports.spec.ts.
 *
 * The pure engine's layers, bottom to top (libs/engine/README.md):
 *   model (types, DAG, {{ }} syntax, pure checks)
 *   ← template (CEL evaluation)
 *   ← definition validation (model/validate.ts, model/validation/: compiles templates to check them)
 *   ← statemachine
 *   ← coordinator, platform, apps
 * A layer imports only layers below it. A spec belongs to the layer of the file it tests.
 *
 * @type {import('dependency-cruiser').IConfiguration}
 */
const PURE = '^libs/engine/src/(model|template|statemachine)/';
const MODEL = '^libs/engine/src/model/';
const VALIDATION = '^libs/engine/src/model/(validate(\\.spec)?\\.ts$|validation/)';
const TEMPLATE = '^libs/engine/src/template/';
const STATEMACHINE = '^libs/engine/src/statemachine/';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means no module of it can be understood, tested or loaded without the others.',
      from: { path: '^(libs|apps)/' },
      to: { circular: true },
    },
    {
      name: 'pure-engine-no-frameworks',
      severity: 'error',
      comment: 'The pure engine runs anywhere, in a test without a database: no Nest, TypeORM, PostgreSQL, Bull or Redis.',
      from: { path: PURE },
      to: { path: '(^|node_modules/)(@nestjs/.+|typeorm|pg|pg-.+|bull|ioredis)(/|$)' },
    },
    {
      name: 'pure-engine-no-node-builtins',
      severity: 'error',
      comment: 'The pure engine does no I/O: no node: module (fs, net, child_process, http, …). Time and ids come through Deps.',
      from: { path: PURE },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'pure-engine-no-shell',
      severity: 'error',
      comment:
        'The pure engine is the bottom of the stack: it never reaches up into the coordinator, the package entry point, the libraries built on it or the apps.',
      from: { path: PURE },
      to: { path: '^(libs/engine/src/(coordinator/|index\\.ts$)|libs/persistence/|libs/platform/|libs/client/|apps/)' },
    },
    {
      name: 'model-is-the-bottom',
      severity: 'error',
      comment: 'model/ (apart from definition validation) imports no other layer of the engine.',
      from: { path: MODEL, pathNot: VALIDATION },
      to: { path: `${TEMPLATE}|${STATEMACHINE}|${VALIDATION}` },
    },
    {
      name: 'template-above-model-only',
      severity: 'error',
      comment: 'template/ builds on model/ alone: not on definition validation, not on the state machine.',
      from: { path: TEMPLATE },
      to: { path: `${STATEMACHINE}|${VALIDATION}` },
    },
    {
      name: 'validation-below-statemachine',
      severity: 'error',
      comment: 'Definition validation uses model/ and template/, never the state machine.',
      from: { path: VALIDATION },
      to: { path: STATEMACHINE },
    },
    {
      name: 'node-kinds-do-not-route',
      severity: 'error',
      comment: 'A node kind returns an outcome; only routing (and the machine that calls it) decides what follows.',
      from: { path: '^libs/engine/src/statemachine/node-kinds/' },
      to: { path: '^libs/engine/src/statemachine/(routing|readiness|branches|machine)\\.ts$' },
    },
    {
      name: 'cel-only-in-resolver',
      severity: 'error',
      comment: 'template/resolver.ts is the one file that knows the CEL library.',
      from: { pathNot: '^libs/engine/src/template/resolver\\.ts$' },
      to: { path: '(^|node_modules/)@marcbachmann/cel-js(/|$)' },
    },
    {
      name: 'coordinator-holds-no-driver',
      severity: 'error',
      comment: 'The coordinator maps actions to repository calls: the driver and every SQL statement live in libs/persistence.',
      from: { path: '^libs/engine/src/coordinator/' },
      to: { path: '(^|node_modules/)(typeorm|pg|pg-.+)(/|$)' },
    },
    {
      name: 'coordinator-reads-the-pure-engine-through-its-entry',
      severity: 'error',
      comment: 'The coordinator sees the pure engine as everyone else does, through libs/engine/src/index.ts.',
      from: { path: '^libs/engine/src/coordinator/' },
      to: { path: '^libs/engine/src/(model|template|statemachine)/' },
    },
    {
      name: 'engine-entry-loads-no-coordinator',
      severity: 'error',
      comment: 'Importing @weft/engine loads the pure engine and its ports only; the coordinator has its own entry point.',
      from: { path: '^libs/engine/src/(index|ports)\\.ts$' },
      to: { path: '^(libs/engine/src/coordinator/|libs/persistence/)' },
    },
    {
      name: 'persistence-stands-alone',
      severity: 'error',
      comment: 'libs/persistence (entities, migrations, SQL) knows neither the engine, the platform nor the apps.',
      from: { path: '^libs/persistence/' },
      to: { path: '^(libs/engine/|libs/platform/|apps/)' },
    },
    {
      name: 'contract-imports-nothing',
      severity: 'error',
      comment: 'libs/contract is bundled into the console as well as run by the API: it imports no package, no Node built-in and no other code.',
      from: { path: '^libs/contract/' },
      to: { pathNot: '^libs/contract/' },
    },
  ],
  options: {
    // Packages are dependencies (the rules above name some) but are not cruised themselves.
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/' },
    // Type-only imports are dependencies too: a layer must not even name a type from above it.
    tsPreCompilationDeps: true,
    // Resolves the @weft/* path aliases.
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      // Packages such as @marcbachmann/cel-js/evaluator exist only as `exports` subpaths.
      exportsFields: ['exports'],
      conditionNames: ['types', 'import', 'require', 'node', 'default'],
    },
  },
};
