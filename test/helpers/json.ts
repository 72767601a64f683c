/**
 * A parsed JSON answer as the tests read it: unchecked on purpose, because every value a test
 * reads from it goes straight into `expect`, which fails the test when the shape is not the one
 * assumed. One named alias keeps that trust visible instead of `any` scattered over the helpers.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the alias is the one place tests opt out of checking wire JSON
export type WireJson = any;
