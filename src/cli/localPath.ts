import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

/**
 * A source word of `loom install` that names a file or folder of the shell's current folder, as an
 * absolute path: the word starts with `./` or `../` (or is `.`/`..`), or is a relative path that
 * exists there. Anything else (absolute paths, `~/…`, URLs, `gh:…`, names the daemon resolves in
 * the agent home) is null and goes to the daemon as typed. Slash commands never get this: there a
 * relative path starts at the agent home (behaviour.md §7.1).
 */
export function shellLocalPath(word: string, cwd = process.cwd()): string | null {
  if (word === '' || isAbsolute(word) || word.startsWith('~')) return null;
  if (/^\.\.?(\/|$)/.test(word)) return resolve(cwd, word);
  // A scheme (https:, gh:, file:) is never a relative path.
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(word)) return null;
  const abs = resolve(cwd, word);
  return existsSync(abs) ? abs : null;
}
