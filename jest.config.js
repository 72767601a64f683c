// Three tiers, told apart by the file name (README, "Tests"; test/tiers.test.ts holds the names true):
//   unit         test/**/*.test.ts       no process, no socket, no build: what a contributor runs while editing
//   integration  test/**/*.int.test.ts   the in-process app (createApp on port 0), helper processes; no build
//   e2e          test/**/*.e2e.test.ts   dist/: the built daemon and CLI, workers, browser, pack, crash, fuzz
const shared = {
  // A private temp folder per test file (the run's folder is made once by globalSetup below).
  testEnvironment: '<rootDir>/test/setup/environment.js',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
  testTimeout: 30000,
  // Inside the repository's ignored node_modules, not jest's default /tmp/jest_*: a run leaves nothing in /tmp.
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
};

const projects = [
  {
    ...shared,
    displayName: 'unit',
    testMatch: ['<rootDir>/test/**/*.test.ts'],
    testPathIgnorePatterns: ['/node_modules/', '\\.(int|e2e)\\.test\\.ts$'],
  },
  { ...shared, displayName: 'integration', testMatch: ['<rootDir>/test/**/*.int.test.ts'] },
  { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e.test.ts'] },
];

// The tier scripts (npm run test:unit …) choose their project through LOOM_TEST_TIER rather than
// jest's --selectProjects, which takes every following word as a project name and so swallowed a
// path given after `--` (`npm run test:unit -- test/sfmd`).
const tier = process.env.LOOM_TEST_TIER;
if (tier && !projects.some((p) => p.displayName === tier)) throw new Error(`LOOM_TEST_TIER=${tier}: expected unit, integration or e2e`);

/** @type {import('jest').Config} */
export default {
  // Top level, so they run once per jest run whatever projects it selects: a failed run when any test
  // file leaves something in the temp folder.
  globalSetup: '<rootDir>/test/setup/globalSetup.js',
  globalTeardown: '<rootDir>/test/setup/globalTeardown.js',
  testTimeout: 30000,
  // Every skipped test is printed with its title, which says why (docs/testing.md "Skips say why").
  reporters: ['default', '<rootDir>/test/setup/skipReporter.js'],
  projects: tier ? projects.filter((p) => p.displayName === tier) : projects,
};
