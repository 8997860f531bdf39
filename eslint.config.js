// `npm run lint`: ESLint with typescript-eslint's recommended rules, without type information
// (a whole-tree run stays under a minute), plus the rules the house style implies. The rules
// turned off are ones the code breaks on purpose; each says why.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** The pure engine: no clock and no randomness (time and ids come in through Deps). */
const PURE_ENGINE = ['libs/engine/src/model/**/*.ts', 'libs/engine/src/template/**/*.ts', 'libs/engine/src/statemachine/**/*.ts'];

export default defineConfig(
  {
    ignores: ['dist/**', 'coverage/**', '**/generated/**', 'bench/peers/**', 'test/architecture/fixtures/**'],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    // Nest injects by the constructor's emitted parameter types: an import a decorated class
    // only uses as a type is still needed at run time, so the parser is told, and
    // consistent-type-imports leaves files with decorators alone.
    languageOptions: { globals: { ...globals.node }, parserOptions: { emitDecoratorMetadata: true, experimentalDecorators: true } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `== null` covers null and undefined at once; everything else compares strictly.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Type-only imports say so (`import type`, or `type X` inside the braces).
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // An underscore marks a name kept on purpose (a parameter a signature needs, a field left out of a rest).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // GraphQL answers, parsed JSON and CLI output are handled as `any` where a type would only repeat the query.
      '@typescript-eslint/no-explicit-any': 'off',
      // A caught failure is translated on purpose (a coded WeftError, a CLI line naming the fix), not wrapped.
      'preserve-caught-error': 'off',
      // NUL, lone surrogates and terminal escapes are matched on purpose: PostgreSQL refuses
      // some, and text a tenant's code prints is shown with the others escaped.
      'no-control-regex': 'off',
    },
  },
  {
    // CommonJS by necessity: Jest's transform and the CODE runner that Node loads without ESM.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['apps/console/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: PURE_ENGINE,
    ignores: ['**/*.spec.ts', '**/testing/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'The pure engine reads time from Deps.now.' },
        { object: 'Math', property: 'random', message: 'The pure engine takes ids and randomness from Deps.' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'The pure engine reads time from Deps.now.' },
      ],
    },
  },
);
