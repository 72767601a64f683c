/**
 * Node flags of every daemon process Loom starts itself: `loom start`, the MCP bridge's start of a
 * missing daemon, `npm start` (package.json) and the `loom` command's own line (bin/loom.js), so
 * `loom daemon` in the foreground runs with them too.
 *
 * `--max-semi-space-size=4` sizes V8's young generation for the daemon's work rather than for the
 * machine: V8 grows it up to the cap under a burst of registrations and keeps it grown while idle,
 * and what survives the daemon's requests is small, so a young generation of a few MiB collects it as
 * well as a large one, with more but shorter scavenges. docs/decisions/0007 and docs/architecture.md
 * ("Resident memory") have the measured RSS and throughput. A test keeps package.json and bin/loom.js
 * in step with this list.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];
