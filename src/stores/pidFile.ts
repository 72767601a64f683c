import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The daemon's own pid file (`<data>/loom.pid`, `loom-user.pid` on the user wire): written once the
 * port is bound, however the daemon was started (`loom start`, `npm start`, `loom daemon`, `loom mcp`),
 * so `loom status` and `loom stop` find it; removed on exit, only while it still names this process
 * (a second daemon on the same data directory may have written its own since).
 */
export function writePidFile(path: string, pid = process.pid): () => void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${pid}.tmp`;
  writeFileSync(tmp, `${pid}\n`, { mode: 0o600 });
  renameSync(tmp, path);
  return () => {
    try {
      if (readFileSync(path, 'utf8').trim() === String(pid)) rmSync(path, { force: true });
    } catch {
      // Already gone: nothing to remove.
    }
  };
}
