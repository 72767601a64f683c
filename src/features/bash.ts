import { BashShells } from '../services/shells.js';
import { ptyAvailable } from '../effects/shellTransport.js';
import { shellMachine } from '../machines/shell.js';
import type { Feature } from './types.js';

/**
 * Persistent shells of `bash:<name>` topics (behaviour.md §8.3): `/exec` in such a topic
 * runs in the topic's own bash (an actor `shell:<agent>/<topic>` under the topic), /topics and the
 * bash hub show it, /close and the end of the session end it, shutdown waits until every shell's
 * process group is gone. `/describe` lists `bash-pty` only when node-pty loaded (§9.3); without it
 * the shells run on pipes. `bash.pty` says the same as a flag, so a client can tell "bash topics on
 * pipes" from "no bash topics" (behaviour.md §17: node-pty is an optional dependency).
 */
export const bashFeature: Feature = ({ directory }) => {
  const shells = new BashShells(directory);
  return {
    services: { bash: shells },
    // A getter: /describe asks when it is called, so node-pty (a native addon, slow to load) loads
    // at the first /describe or bash topic, not at every start.
    get describe() {
      const pty = ptyAvailable();
      return pty ? { bash: { pty }, 'bash-pty': {} } : { bash: { pty } };
    },
    // GET /inspect/machines draws the shell machine from its definition (behaviour.md §13.1).
    machines: [shellMachine],
    onShutdown: () => shells.shutdown(),
  };
};
