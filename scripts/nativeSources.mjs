// The identity of the sources Loom's native parts are built from (binding.gyp and native/*), shared by
// scripts/prebuild.mjs (which writes it into prebuilds/manifest.json), scripts/install.mjs (which
// builds locally when the prebuilt parts were made from other sources) and the test that keeps the
// committed prebuilt parts current (test/package/prebuilds.test.ts).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The parts, in the order the install line and /describe name them; `addon`: a Node addon, else an executable. */
export const PARTS = [
  { name: 'loom_spawn', file: 'loom_spawn.node', addon: true },
  { name: 'loom_fd', file: 'loom_fd.node', addon: true },
  { name: 'loom_sandbox', file: 'loom_sandbox', addon: false },
  { name: 'node-pty', file: 'pty.node', addon: true },
];

/** The platforms prebuilt parts are made for (glibc). */
export const TARGETS = ['linux-x64', 'linux-arm64'];

/** sha256 over binding.gyp and every file of native/, by name and content. */
export function sourcesHash(root) {
  const h = createHash('sha256');
  const files = ['binding.gyp', ...readdirSync(join(root, 'native')).sort().map((f) => `native/${f}`)];
  for (const f of files) {
    h.update(`${f}\0`);
    h.update(readFileSync(join(root, f)));
    h.update('\0');
  }
  return h.digest('hex');
}

/** The prebuilt parts' manifest, or null when there is none. */
export function readManifest(root) {
  try {
    return JSON.parse(readFileSync(join(root, 'prebuilds', 'manifest.json'), 'utf8'));
  } catch {
    return null;
  }
}
