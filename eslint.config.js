// Lint config: type-aware typescript-eslint rules that catch real defects (lost promises, `any`
// leaking through, dead code, stray console output). No stylistic rules: formatting is not checked here.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Rules that find defects; the same set over src/ and test/ unless overridden below. */
const defectRules = {
  // Promises: a promise nobody awaits or catches loses its rejection; one passed where a void
  // callback is expected (event handlers, forEach) runs unobserved.
  '@typescript-eslint/no-floating-promises': 'error',
  '@typescript-eslint/no-misused-promises': 'error',
  '@typescript-eslint/await-thenable': 'error',
  '@typescript-eslint/return-await': ['error', 'in-try-catch'],
  // `any`: each of these lets an unchecked value flow into typed code.
  '@typescript-eslint/no-explicit-any': 'error',
  '@typescript-eslint/no-unsafe-assignment': 'error',
  '@typescript-eslint/no-unsafe-call': 'error',
  '@typescript-eslint/no-unsafe-member-access': 'error',
  '@typescript-eslint/no-unsafe-return': 'error',
  '@typescript-eslint/no-unsafe-argument': 'error',
  // Dead or mistaken code.
  'no-unreachable': 'error',
  'no-fallthrough': 'error',
  'no-self-assign': 'error',
  'no-dupe-else-if': 'error',
  'no-constant-binary-expression': 'error',
  'no-cond-assign': ['error', 'except-parens'],
  'no-async-promise-executor': 'error',
  'no-unsafe-finally': 'error',
  'no-unsafe-optional-chaining': 'error',
  'no-self-compare': 'error',
  '@typescript-eslint/no-for-in-array': 'error',
  '@typescript-eslint/no-implied-eval': 'error',
  '@typescript-eslint/restrict-plus-operands': 'error',
  '@typescript-eslint/no-array-delete': 'error',
  // A new member of a union must be handled wherever a switch lists the others.
  '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
  '@typescript-eslint/no-unused-expressions': 'error',
  // A catch or block with nothing in it, not even a comment saying why (architecture.md: no empty catch).
  'no-empty': 'error',
  '@typescript-eslint/no-unused-vars': [
    'error',
    {
      args: 'after-used',
      argsIgnorePattern: '^_',
      varsIgnorePattern: '^_',
      caughtErrors: 'none',
      destructuredArrayIgnorePattern: '^_',
      ignoreRestSiblings: true,
    },
  ],
  // The daemon logs through its logger; the CLI (src/cli) is the one place that prints.
  'no-console': 'error',
};

export default defineConfig(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', 'bench/**', 'scripts/**', 'web/**', 'examples/**', 'coverage/**', 'test-artifacts/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: defectRules,
  },
  {
    // Tests read wire JSON through one unchecked alias (test/helpers/json.ts) and hand each value
    // to `expect`, which checks it at run time; flagging every such read would only add casts.
    // Explicit `any`, the promise rules and the rest stay on.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    // The CLI's job is to print; the fuzz runner is a command-line program too.
    files: ['src/cli/**/*.ts', 'test/fuzz/main.ts'],
    rules: { 'no-console': 'off' },
  },
);
