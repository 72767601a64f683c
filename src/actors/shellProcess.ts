import { fromCallback } from 'xstate';
import { errorMessage } from '../domain/errors.js';
import type { ProcessCommand, ProcessInput } from '../machines/shell.js';
import { ShellProcess } from '../effects/shellProcess.js';

/**
 * The `process` actor of the shell machine (machines/shell.ts): owns one shell process
 * (effects/shellProcess.ts), runs what the machine tells it and reports `proc.*` events back. Its
 * clean-up, run when the machine ends or its topic stops, ends the shell: SIGHUP to the process
 * group, SIGKILL 2 s later (behaviour.md §8.3).
 */
export const shellProcessLogic = fromCallback<ProcessCommand, ProcessInput>(({ input, sendBack, receive }) => {
  let shell: ShellProcess;
  try {
    shell = new ShellProcess({
      cwd: input.cwd,
      env: input.env,
      ...(input.confine ? { confine: input.confine } : {}),
      hooks: {
        ready: (info) => sendBack({ type: 'proc.ready', ...info }),
        done: (r) => sendBack({ type: 'proc.done', ...r }),
        interrupted: (r) => sendBack({ type: 'proc.interrupted', ...r }),
        exited: (r) => sendBack({ type: 'proc.exited', ...r }),
      },
    });
  } catch (err) {
    sendBack({ type: 'proc.failed', message: `cannot start a shell in ${input.cwd}: ${errorMessage(err)}` });
    return () => undefined;
  }
  receive((cmd) => {
    if (cmd.type === 'proc.run') shell.run(cmd.text);
    else if (cmd.type === 'proc.interrupt') sendBack({ type: 'proc.interrupting', ...shell.interrupt() });
    else shell.kill();
  });
  return () => shell.end();
});
