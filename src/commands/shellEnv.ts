import { nullRecord } from '../domain/keys.js';
import type { CommandContext } from './types.js';
import { idEnvName } from '../domain/wire.js';
import { wireOf } from './wire.js';

/**
 * The one environment builder of the shells Loom starts (`/exec`, behaviour.md §8.2; CLI actions,
 * §4.8): the daemon's environment, then each layer in order (a later layer wins), then defaults for
 * names no layer set (they do override the daemon's environment).
 */
export function buildEnv(layers: Array<Iterable<[string, string]>>, defaults: Iterable<[string, string]> = []): NodeJS.ProcessEnv {
  // Names are user text (`$__proto__` is a legal variable): no prototype to write through.
  const env: NodeJS.ProcessEnv = Object.assign(nullRecord<string>(), process.env);
  const set = new Set<string>();
  for (const layer of layers) {
    for (const [k, v] of layer) {
      env[k] = v;
      set.add(k);
    }
  }
  for (const [k, v] of defaults) if (!set.has(k)) env[k] = v;
  return env;
}

/**
 * What every shell of an agent's topic gets (behaviour.md §8.2, §4.6, §12 Q3): `HOME` = the agent
 * home (each agent is its own identity), the human's home as `LOOM_USER_HOME`, and where it runs.
 * The id is `LOOM_AGENT_ID`, read as `LOOM_USER_ID` on the user wire (behaviour.md §11).
 */
export function identityEnv(ctx: CommandContext): Array<[string, string]> {
  return [
    ['HOME', ctx.agent.home],
    [idEnvName(wireOf(ctx)), ctx.agent.id],
    ['LOOM_TOPIC', ctx.session.ref.topic],
    ['LOOM_HOME', ctx.agent.home],
    ['LOOM_USER_HOME', process.env.HOME ?? ''],
    ['SVC_PORT', String(ctx.services.info.port())],
  ];
}

/**
 * The environment of the persistent shells of `bash:<name>` topics (behaviour.md §8.3): the one-shot
 * environment plus a quiet, dumb terminal. Beyond the spec's list, PAGER and GIT_PAGER are `cat`
 * (on a PTY, `git log` or `man` would start `less`, which waits for keys until the time limit), and
 * an inherited TMOUT is dropped (it would end an idle interactive shell by itself).
 */
export function persistentShellEnv(ctx: CommandContext): NodeJS.ProcessEnv {
  const env = buildEnv([identityEnv(ctx), [
    ['TERM', 'dumb'], ['PS1', ''], ['PS2', ''], ['PROMPT_COMMAND', ''], ['HISTFILE', '/dev/null'], ['PAGER', 'cat'], ['GIT_PAGER', 'cat'],
  ]]);
  delete env.TMOUT;
  return env;
}
