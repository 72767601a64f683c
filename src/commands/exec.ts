import { EXEC_OUTPUT_BYTES, EXEC_TIMEOUT_DEFAULT_S, EXEC_TIMEOUT_MAX_S } from '../domain/limits.js';
import { fail, joinLines, type CommandResult } from '../domain/result.js';
import { cleanOutput, HeadTailCapture } from '../effects/captures.js';
import { runShell } from '../effects/shellRun.js';
import type { Command } from './types.js';
import { displayPath } from './format.js';
import { buildEnv, identityEnv } from './shellEnv.js';

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

/** `/exec [--timeout <s>] <shell text>` one-shot form (behaviour.md §8.1–8.2). */
export const execCommand: Command = {
  name: 'exec',
  takesBody: true,
  async run(ctx) {
    const parsed = parseExecArgs(ctx.args, ctx.body);
    if (!parsed.ok) return parsed.result;
    const cwd = ctx.agent.home;
    // Env-store and session variables are not exported to /exec (behaviour.md §8.2): only the identity.
    const capture = new HeadTailCapture(EXEC_OUTPUT_BYTES / 2);
    const r = await runShell({
      command: parsed.text, cwd, env: buildEnv([identityEnv(ctx)]), timeoutMs: parsed.timeoutS * 1000, timeoutSignal: 'SIGINT', capture, signal: ctx.signal,
    });
    const { output, omitted } = capture.result();
    let text = cleanOutput(output.toString('utf8'));
    if (omitted > 0) {
      const head = cleanOutput(output.subarray(0, output.length / 2).toString('utf8'));
      const tail = cleanOutput(output.subarray(output.length / 2).toString('utf8'));
      text = `${head}\n… ${omitted} bytes omitted …\n${tail}`;
    }
    const shown = text === '' ? '(no output)' : text;
    const where = `cwd: ${displayPath(cwd, ctx.agent.home)}`;
    if (r.aborted) return fail('CONFLICT', `Topic ${ctx.session.ref.topic} was closed while this command ran`);
    if (r.timedOut) {
      return { ok: false, code: 'TIMEOUT', body: joinLines([`ERROR(TIMEOUT): timed out after ${parsed.timeoutS} s; the command was interrupted`, `exit: timeout | ${where}`, '---', shown]) };
    }
    const code = r.exitCode ?? 1;
    if (code !== 0) {
      return { ok: false, code: `EXIT_${code}`, body: joinLines([`ERROR(EXIT_${code}): command exited with status ${code}`, `exit: ${code} | ${where}`, '---', shown]) };
    }
    return { ok: true, code: null, body: joinLines([`exit: 0 | ${where}`, '---', shown]) };
  },
};
