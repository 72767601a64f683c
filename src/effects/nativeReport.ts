import type { NativePartName, NativePartStatus } from './nativeParts.js';
import { nativePartStatus } from './nativeParts.js';
import { fdHelperLoaded } from './nativeFd.js';
import { missingSandboxPart } from './sandbox.js';
import { ptyAvailable } from './shellTransport.js';

/**
 * `/describe`'s `native` entry (behaviour.md §17): each native part, where it was loaded from
 * (`build`, `prebuilt`, `package`) or why it is missing. Asks for every part first, so the answer
 * does not depend on what the daemon happened to use before.
 */
export function nativeReport(): Record<NativePartName, NativePartStatus> {
  fdHelperLoaded();
  missingSandboxPart();
  ptyAvailable();
  const names: NativePartName[] = ['loom_spawn', 'loom_fd', 'loom_sandbox', 'node-pty'];
  return Object.fromEntries(names.map((n) => [n, nativePartStatus(n) ?? { loaded: false, reason: 'not asked for' }])) as Record<NativePartName, NativePartStatus>;
}
