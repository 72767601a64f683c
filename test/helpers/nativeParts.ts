import { describe, it } from '@jest/globals';
import type { PtyModule } from '../../src/adapters/ptyTypes.js';
import { loadPtyLibrary, nativePartStatus, type NativePartName } from '../../src/effects/nativeParts.js';

/*
 * Tests that need a native part (behaviour.md §17) run where it loads and are skipped elsewhere, with
 * the reason in the title (test/setup/skipReporter.js prints every skipped title): never failed for
 * a missing part, never passed without running.
 */

/** Why a part is missing here, or null when it loaded (asks nativeParts, as the daemon does). */
export function partMissing(name: NativePartName): string | null {
  const s = nativePartStatus(name);
  if (s === null) return `${name} was not asked for`;
  return s.loaded ? null : `${name} is missing: ${s.reason}`;
}

/** node-pty, loaded as the daemon loads it, or null. */
export const pty: PtyModule | null = loadPtyLibrary();

/** Why a terminal test cannot run here, or null. */
export const ptySkip: string | null = pty ? null : partMissing('node-pty');

/** `describe`, or `describe.skip` with the reason appended to the title when `reason` is set. */
export function describeUnless(reason: string | null): (title: string, fn: () => void) => void {
  return reason === null ? describe : (title, fn) => describe.skip(`${title} (skipped: ${reason})`, fn);
}

/** `it`, or `it.skip` with the reason appended to the title when `reason` is set. */
export function itUnless(reason: string | null): (title: string, fn: () => Promise<void> | void) => void {
  return reason === null ? it : (title, fn) => it.skip(`${title} (skipped: ${reason})`, fn);
}

/** node-pty for a test that only runs when `ptySkip` is null. */
export function requirePty(): PtyModule {
  if (!pty) throw new Error(`node-pty is missing: ${ptySkip ?? ''}`);
  return pty;
}
