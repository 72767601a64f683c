/**
 * Node flags of every daemon process Loom starts itself: `loom start`, the MCP bridge's start of a
 * missing daemon, `loom service` and `npm start` (package.json). `loom daemon` in the foreground
 * re-executes itself with them where Node can (see {@link withDaemonFlags}); the `loom` command's own
 * line (bin/loom.js) carries none, because on Node 20 and 22 any flag there makes every CLI call
 * compile Node's own modules.
 *
 * `--max-semi-space-size=4` sizes V8's young generation for the daemon's work rather than for the
 * machine: V8 grows it up to the cap under a burst of registrations and keeps it grown while idle,
 * and what survives the daemon's requests is small, so a young generation of a few MiB collects it as
 * well as a large one, with more but shorter scavenges. docs/decisions/0007 and docs/architecture.md
 * ("Resident memory") have the measured RSS and throughput. A test keeps package.json in step with
 * this list.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];

interface ExecveProcess {
  execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never;
}

/**
 * When this process lacks {@link DAEMON_NODE_FLAGS} (a foreground `loom daemon` run through the
 * `loom` command or a plain `node dist/cli/main.js daemon`), replace it with the same command plus the
 * flags: `process.execve` (Node >= 22.15) keeps the pid, the terminal and the open descriptors, so
 * signals and the pid file mean what they did. A flag the process already has by name, with any value
 * (`node --max-semi-space-size=8 …`), is the user's choice and kept. On a Node without execve, or if
 * the exec fails, the daemon runs without the flags (they size memory only). Returns only then.
 */
export function withDaemonFlags(): void {
  const name = (flag: string): string => flag.split('=')[0];
  const given = new Set(process.execArgv.map(name));
  const missing = DAEMON_NODE_FLAGS.filter((f) => !given.has(name(f)));
  const execve = (process as ExecveProcess).execve;
  if (missing.length === 0 || typeof execve !== 'function' || !process.argv[1]) return;
  try {
    execve(process.execPath, [process.execPath, ...process.execArgv, ...missing, ...process.argv.slice(1)], process.env);
  } catch {
    // Runs without the flags: they size memory, nothing depends on them.
  }
}
