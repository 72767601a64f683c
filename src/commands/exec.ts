import { EXEC_OUTPUT_BYTES, EXEC_TIMEOUT_DEFAULT_S, EXEC_TIMEOUT_MAX_S } from '../domain/limits.js';
import { fail, joinLines, type CommandResult } from '../domain/result.js';
import type { ConfinePlan } from '../domain/sandbox.js';
import { cleanOutput, HeadTailCapture } from '../effects/captures.js';
import { runShell } from '../effects/shellRun.js';
import type { BashServices, Command, CommandContext } from './types.js';
import { displayPath } from './format.js';
import { commandSandbox, sandboxEnv, spawnFailure, watchDenials } from './sandbox.js';
import { buildEnv, identityEnv, persistentShellEnv } from './shellEnv.js';

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
  // bash cannot receive a NUL byte (argv strings end there): refused, not an INTERNAL_ERROR.
  if (text.includes('\0')) return { ok: false, result: fail('INVALID_ARGS', 'The command contains a NUL byte') };
  return { ok: true, timeoutS, text };
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
async function runInShell(ctx: CommandContext, bash: BashServices, text: string, timeoutS: number, confine: ConfinePlan | null): Promise<CommandResult> {
  const env = () => sandboxEnv(persistentShellEnv(ctx), confine);
  const explain = watchDenials(ctx, confine);
  const o = await bash.run(ctx, { text, timeoutMs: timeoutS * 1000, env, ...(confine ? { confine } : {}) });
  return explain(shellResult(ctx, o, timeoutS), 'output' in o ? o.output.toString('utf8') : '');
}

/** The answer of a persistent shell's run (behaviour.md §8.3). */
function shellResult(ctx: CommandContext, o: Awaited<ReturnType<BashServices['run']>>, timeoutS: number): CommandResult {
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

/** `/exec [--timeout <s>] <shell text>` (behaviour.md §8): the persistent shell in `bash:<name>` topics, else one-shot (§8.1–8.2). */
export const execCommand: Command = {
  name: 'exec',
  takesBody: true,
  async run(ctx) {
    const parsed = parseExecArgs(ctx.args, ctx.body);
    if (!parsed.ok) return parsed.result;
    const sandbox = commandSandbox(ctx);
    if (!sandbox.ok) return sandbox.result;
    if (ctx.session.ref.type === 'bash' && ctx.services.bash) return runInShell(ctx, ctx.services.bash, parsed.text, parsed.timeoutS, sandbox.plan);
    const cwd = ctx.agent.home;
    // Env-store and session variables are not exported to /exec (behaviour.md §8.2): only the identity.
    const capture = new HeadTailCapture(EXEC_OUTPUT_BYTES / 2);
    const explain = watchDenials(ctx, sandbox.plan);
    const r = await runShell({
      command: parsed.text, cwd, env: sandboxEnv(buildEnv([identityEnv(ctx)]), sandbox.plan), timeoutMs: parsed.timeoutS * 1000, timeoutSignal: 'SIGINT', capture, signal: ctx.signal,
      ...(sandbox.plan ? { confine: sandbox.plan } : {}),
    });
    if (r.aborted) return explain(fail('CONFLICT', `Topic ${ctx.session.ref.topic} was closed while this command ran`), '');
    if (r.spawnError !== undefined) return explain(spawnFailure(r.spawnError, sandbox.plan), '');
    const { output, omitted } = capture.result();
    return explain(execResult({ exit: r.timedOut ? 'timeout' : r.exitCode ?? 1, timeoutS: parsed.timeoutS, cwd: displayPath(cwd, ctx.agent.home), shown: shownOutput(output, omitted) }), output.toString('utf8'));
  },
};
