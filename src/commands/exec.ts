import { EXEC_TIMEOUT_DEFAULT_S, EXEC_TIMEOUT_MAX_S } from '../domain/limits.js';
import { fail, joinLines, type CommandResult } from '../domain/result.js';
import { cleanOutput, runOneShot } from '../effects/oneShot.js';
import type { BashServices, Command, CommandContext } from './types.js';
import { displayPath } from './format.js';

/** Parse `[--timeout <s>] <text>` (behaviour.md §8.1): --timeout only as the first token; `--` passes the rest literally. */
export function parseExecArgs(args: string, body: string): { ok: true; timeoutS: number; text: string } | { ok: false; result: CommandResult } {
  let rest = args;
  let timeoutS = EXEC_TIMEOUT_DEFAULT_S;
  const t = /^--timeout(?:=|\s+)(\S*)\s*/.exec(rest);
  if (t) {
    const n = Number(t[1]);
    if (!/^\d+$/.test(t[1]) || n < 1 || n > EXEC_TIMEOUT_MAX_S) return { ok: false, result: fail('INVALID_ARGS', '--timeout must be 1 to 600 seconds') };
    timeoutS = n;
    rest = rest.slice(t[0].length);
  } else if (/^--(\s|$)/.test(rest)) {
    rest = rest.replace(/^--\s?/, '');
  }
  const text = body === '' ? rest : `${rest}\n${body}`;
  if (text.trim() === '') return { ok: false, result: fail('INVALID_ARGS', 'Usage: /exec <shell command>') };
  return { ok: true, timeoutS, text };
}

/** The environment of one-shot commands (behaviour.md §8.2); env-store and session variables are not exported. */
export function execEnv(ctx: CommandContext): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: ctx.agent.home,
    LOOM_AGENT_ID: ctx.agent.id,
    LOOM_TOPIC: ctx.session.ref.topic,
    LOOM_HOME: ctx.agent.home,
    LOOM_USER_HOME: process.env.HOME ?? '',
    SVC_PORT: String(ctx.services.info.port()),
  };
}

/**
 * The environment of persistent shells (behaviour.md §8.3): the one-shot environment plus a quiet,
 * dumb terminal. Beyond the spec's list, PAGER and GIT_PAGER are `cat`: on a PTY, `git log` or `man`
 * would start `less`, which waits for keys on /dev/tty until the time limit.
 */
export function shellEnv(ctx: CommandContext): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...execEnv(ctx), TERM: 'dumb', PS1: '', PS2: '', PROMPT_COMMAND: '', HISTFILE: '/dev/null', PAGER: 'cat', GIT_PAGER: 'cat',
  };
  // An inherited TMOUT would end an idle interactive shell by itself.
  delete env.TMOUT;
  return env;
}

/** Output as behaviour.md §8.1 shows it: cleaned, the middle cut past the cap, `(no output)` when empty. */
export function shownOutput(output: Buffer, omitted: number): string {
  let text = cleanOutput(output.toString('utf8'));
  if (omitted > 0) {
    const head = cleanOutput(output.subarray(0, output.length / 2).toString('utf8'));
    const tail = cleanOutput(output.subarray(output.length / 2).toString('utf8'));
    text = `${head}\n… ${omitted} bytes omitted …\n${tail}`;
  }
  return text === '' ? '(no output)' : text;
}

/** The result of an /exec that ran (behaviour.md §8.1): exit status or timeout, cwd, output, extra lines. */
export function execResult(r: { exit: number | 'timeout'; timeoutS: number; cwd: string; shown: string; after?: string[] }): CommandResult {
  const tail = [`exit: ${r.exit} | cwd: ${r.cwd}`, '---', r.shown, ...(r.after ?? [])];
  if (r.exit === 'timeout') return { ok: false, code: 'TIMEOUT', body: joinLines([`ERROR(TIMEOUT): timed out after ${r.timeoutS} s; the command was interrupted`, ...tail]) };
  if (r.exit !== 0) return { ok: false, code: `EXIT_${r.exit}`, body: joinLines([`ERROR(EXIT_${r.exit}): command exited with status ${r.exit}`, ...tail]) };
  return { ok: true, code: null, body: joinLines(tail) };
}

/** behaviour.md §8.3: the line after the result of a command whose shell ended. */
export const SHELL_ENDED_LINE = '(shell ended; the next /exec starts a new shell in ~)';

/** `/exec` in a `bash:<name>` topic (behaviour.md §8.3): the text runs in the topic's persistent shell. */
async function runInShell(ctx: CommandContext, bash: BashServices, text: string, timeoutS: number): Promise<CommandResult> {
  const o = await bash.run(ctx, { text, timeoutMs: timeoutS * 1000, env: () => shellEnv(ctx) });
  const home = ctx.agent.home;
  switch (o.kind) {
    case 'closed':
      return fail('CONFLICT', `Topic ${ctx.session.ref.topic} was closed while this command ran`);
    case 'failed':
      return fail('INTERNAL_ERROR', `Internal error: ${o.message}`);
    case 'done':
      return execResult({ exit: o.exitCode, timeoutS, cwd: displayPath(o.cwd, home), shown: shownOutput(o.output, o.omitted) });
    case 'timeout':
      return execResult({ exit: 'timeout', timeoutS, cwd: displayPath(o.cwd, home), shown: shownOutput(o.output, o.omitted), after: o.ended ? [SHELL_ENDED_LINE] : [] });
    case 'ended':
      return execResult({ exit: o.exitCode, timeoutS, cwd: displayPath(o.cwd, home), shown: shownOutput(o.output, o.omitted), after: [SHELL_ENDED_LINE] });
  }
}

/** `/exec [--timeout <s>] <shell text>` (behaviour.md §8): the persistent shell in `bash:<name>` topics, else one-shot. */
export const execCommand: Command = {
  name: 'exec',
  takesBody: true,
  async run(ctx) {
    const parsed = parseExecArgs(ctx.args, ctx.body);
    if (!parsed.ok) return parsed.result;
    if (ctx.session.ref.type === 'bash' && ctx.services.bash) return runInShell(ctx, ctx.services.bash, parsed.text, parsed.timeoutS);
    const cwd = ctx.agent.home;
    const r = await runOneShot({ text: parsed.text, cwd, env: execEnv(ctx), timeoutMs: parsed.timeoutS * 1000, signal: ctx.signal });
    if (r.aborted) return fail('CONFLICT', `Topic ${ctx.session.ref.topic} was closed while this command ran`);
    const shown = shownOutput(r.output, r.omitted);
    const where = displayPath(cwd, ctx.agent.home);
    return execResult({ exit: r.timedOut ? 'timeout' : r.exitCode ?? 1, timeoutS: parsed.timeoutS, cwd: where, shown });
  },
};
