/** Types of scripts/nativeSources.mjs, for the tests that use it. */
export interface NativePart {
  name: 'loom_spawn' | 'loom_fd' | 'loom_sandbox' | 'node-pty';
  file: string;
  addon: boolean;
}
export const PARTS: NativePart[];
export const TARGETS: string[];
export function sourcesHash(root: string): string;
export function readManifest(root: string): unknown;
