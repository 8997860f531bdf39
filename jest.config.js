/**
 * Jest in native ESM mode: test/support/ts-transform.cjs transpiles, `npm run typecheck`
 * type-checks. Three projects:
 * `unit` (`*.spec.ts`: the pure engine, the executors, the parsers; no database, no Redis),
 * `integration` (`*.int-spec.ts`, `*.e2e-spec.ts`: real PostgreSQL and Redis, one database per
 * file cloned from a migrated template that the global setup creates) and `browser`
 * (`test/browser/*.browser-spec.ts`: the console's build in Debian's Chromium, driven by
 * playwright-core, against a whole platform per file; needs `npm run build:console` first).
 */
const shared = {
  // One id for the three projects: they share Jest's transform cache (and the file map, which is
  // the same for all three), so a file is transpiled once, not once per project.
  id: 'weft',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  moduleNameMapper: {
    '^@weft/engine$': '<rootDir>/libs/engine/src/index.ts',
    '^@weft/engine/coordinator$': '<rootDir>/libs/engine/src/coordinator/index.ts',
    '^@weft/persistence$': '<rootDir>/libs/persistence/src/index.ts',
    '^@weft/platform$': '<rootDir>/libs/platform/src/index.ts',
    '^@weft/client$': '<rootDir>/libs/client/src/index.ts',
    '^@weft/contract$': '<rootDir>/libs/contract/src/index.ts',
    '^@weft/api$': '<rootDir>/apps/api/src/index.ts',
    '^@weft/worker$': '<rootDir>/apps/worker/src/index.ts',
    '^@weft/scheduler$': '<rootDir>/apps/scheduler/src/index.ts',
    '^@weft/cli$': '<rootDir>/apps/cli/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': '<rootDir>/test/support/ts-transform.cjs',
  },
};

export default {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/**/*.spec.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/**/*.int-spec.ts', '<rootDir>/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
    },
    {
      ...shared,
      displayName: 'browser',
      testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      testTimeout: 120000,
    },
  ],
  // The summary reporter's `tests:` line closes the output; the ten slowest files come just before it.
  reporters: ['default', '<rootDir>/test/support/slowest-reporter.js', '<rootDir>/test/support/summary-reporter.js'],
  testTimeout: 60000,
  // `npm test` runs two files at a time in two worker processes (`--maxWorkers=2`), not in Jest's
  // own process (`--runInBand`): in native ESM mode every file leaves its modules on the heap
  // (about 40 MB a file here), so one process running the whole suite nears V8's heap limit (4 GB)
  // by the hundredth file and then spends most of its time collecting garbage. A worker is
  // replaced by a fresh one after a file that leaves it above this much memory. Two, because many
  // files spend much of their time waiting (for a lease, a drain, a spawned process), so two share
  // two cores well; the files keep apart (own database, Redis keys, ports, uid blocks).
  workerIdleMemoryLimit: '1GB',
};
