import { BashShells } from '../services/shells.js';
import { ptyAvailable } from '../effects/shellTransport.js';
import { shellMachine } from '../machines/shell.js';
import type { Feature } from './types.js';

/**
 * Persistent shells of `bash:<name>` topics (issue 15, behaviour.md §8.3): `/exec` in such a topic
 * runs in the topic's own bash (an actor `shell:<agent>/<topic>` under the topic), /topics and the
 * bash hub show it, /close and the end of the session end it, shutdown waits until every shell's
 * process group is gone. `/describe` lists `bash-pty` only when node-pty loaded (§9.3); without it
 * the shells run on pipes.
 */
export const bashFeature: Feature = ({ directory }) => {
  const shells = new BashShells(directory);
  return {
    services: { bash: shells },
    // A getter: /describe asks when it is called, so node-pty (a native addon, ~8 ms to load) loads
    // at the first /describe or bash topic, not at every start (issue 13, cold start).
    get describe() { return ptyAvailable() ? { 'bash-pty': {} } : {}; },
    // GET /inspect/machines draws the shell machine from its definition (behaviour.md §13.1).
    machines: [shellMachine],
    onShutdown: () => shells.shutdown(),
  };
};
