import { statSync } from 'node:fs';

/**
 * behaviour.md §15.6: the data directory holds every agent's registry, tokens and private temp
 * folders, so it must be the daemon user's own and writable by nobody else. Returns the one line the
 * daemon exits with, or null when the folder is fine.
 */
export function dataDirProblem(dataDir: string): string | null {
  let st;
  try {
    st = statSync(dataDir);
  } catch (err) {
    return `loom: cannot use data directory ${dataDir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
  }
  if (!st.isDirectory()) return `loom: data directory ${dataDir} is not a folder`;
  const uid = process.geteuid?.();
  if (uid !== undefined && st.uid !== uid) return `loom: data directory ${dataDir} belongs to another user (uid ${st.uid}); run the daemon as that user or choose another SVC_DATA_DIR`;
  const mode = st.mode & 0o777;
  if ((mode & 0o022) !== 0) return `loom: data directory ${dataDir} is writable by others (mode ${mode.toString(8).padStart(4, '0')}); fix it with chmod 700 ${dataDir}`;
  return null;
}
