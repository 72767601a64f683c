/**
 * Node flags of every daemon process Loom starts itself: `loom start`, the MCP bridge's start of a
 * missing daemon, `npm start` (package.json) and the `loom` command's own line (bin/loom.js), so
 * `loom daemon` in the foreground runs with them too.
 *
 * `--max-semi-space-size=16` caps V8's young generation at Node 20's default. Node 22 and 24 size it
 * from the machine's memory and grow it under a burst of registrations, and keep it, so the
 * daemon's resident memory would depend on when it grew (docs/decisions/0007, bench/scale). A
 * smaller young generation means more, shorter scavenges, as Node 20 runs by default. A test keeps
 * package.json and bin/loom.js in step with this list.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16'];
