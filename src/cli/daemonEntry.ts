/**
 * The daemon's way in from the CLI: `loom daemon` loads the composition root through this module
 * only, and the bundle (scripts/bundle.mjs) builds it as an entry of its own, so the small `loom`
 * entry reaches the daemon without the command tree.
 */
export { runDaemon } from '../main.js';
