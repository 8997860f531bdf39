/** Jest in native ESM mode (see ../shared/STACK.md): ts-jest transpiles, `npm run typecheck` type-checks. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  testMatch: ['<rootDir>/**/*.spec.ts', '<rootDir>/**/*.int-spec.ts', '<rootDir>/**/*.e2e-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  moduleNameMapper: {
    '^@weft/engine$': '<rootDir>/libs/engine/src/index.ts',
    '^@weft/persistence$': '<rootDir>/libs/persistence/src/index.ts',
    '^@weft/platform$': '<rootDir>/libs/platform/src/index.ts',
    '^@weft/client$': '<rootDir>/libs/client/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, isolatedModules: true, tsconfig: 'tsconfig.json' }],
  },
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testTimeout: 60000,
};
