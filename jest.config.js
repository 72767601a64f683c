/** @type {import('jest').Config} */
export default {
  // A private temp folder per run and per test file, and a failed run when anything is left in it.
  testEnvironment: '<rootDir>/test/setup/environment.js',
  globalSetup: '<rootDir>/test/setup/globalSetup.js',
  globalTeardown: '<rootDir>/test/setup/globalTeardown.js',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testTimeout: 30000,
};
