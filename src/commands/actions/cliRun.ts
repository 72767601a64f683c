import { fail, type CommandResult } from '../../domain/result.js';
import { SplitCapture } from '../../effects/captures.js';
import { runShell } from '../../effects/shellRun.js';
import type { BoundField } from '../../sfmd/bind.js';
import { slotText, valueText } from '../../sfmd/fieldValues.js';
import { tryParseJson } from '../../sfmd/jsonPath.js';
import { referencedNames, substituteCommand } from '../../sfmd/shellQuote.js';
import type { ActionDef } from '../../sfmd/types.js';
import type { LoadedDocument } from '../docContract.js';
import { commandSandbox, sandboxEnv, spawnFailure, watchDenials } from '../sandbox.js';
import type { CommandContext } from '../types.js';
import { failure, finish } from './results.js';
import { actionDir, cliEnvironment } from './variables.js';

/** CLI action limits (behaviour.md §1.8, §4.8), injectable for tests. */
export interface CliLimits {
  timeoutMs: number;
  maxBytes: number;
}

/** behaviour.md §4.8 defaults: 120 s, 10 MiB captured. */
export const CLI_LIMITS: CliLimits = { timeoutMs: 120000, maxBytes: 10 * 1024 * 1024 };

/** behaviour.md §4.14: what a non-local document is, for the FORBIDDEN text. */
function originText(loaded: LoadedDocument): string {
  return loaded.origin === 'web' ? 'a web page' : 'a linked package';
}

/** Trailing newlines removed (behaviour.md §4.9). */
function trimNl(s: string): string {
  return s.replace(/\n+$/, '');
}

/**
 * Run a CLI action (behaviour.md §4.8): locality first, then the quoted command under
 * `/bin/bash -c` with the action environment; results per §4.9.
 */
export async function runCliActionCommand(ctx: CommandContext, loaded: LoadedDocument, a: ActionDef, fields: Map<string, BoundField>, warnings: string[], limits: CliLimits): Promise<CommandResult> {
  if (loaded.origin !== 'local') {
    return fail('FORBIDDEN', `CLI actions run only from local documents; ${loaded.display} is ${originText(loaded)}`);
  }
  const template = a.command ?? '';
  const referenced = referencedNames(template);
  const sub = substituteCommand(template, (ph) => {
    const f = fields.get(ph.name);
    if (f) return { text: ph.index !== undefined ? slotText(f.value, ph.index) : valueText(f.value), label: `--${ph.name}` };
    const v = ctx.session.vars.get(ph.name);
    if (v !== undefined) return { text: ph.index !== undefined ? slotText(v, ph.index) : v, label: `{${ph.name}}` };
    return null;
  }, (name) => {
    // A session variable the command reads as `$name` is exported (§4.8); it counts where bash evaluates that name.
    const v = referenced.has(name) ? ctx.session.vars.get(name) : undefined;
    return v === undefined ? null : { text: v, label: `{${name}}` };
  });
  if (!sub.ok) return fail('INVALID_ARGS', sub.message, { recovery: `/act.${a.id} --help` });
  const sandbox = commandSandbox(ctx);
  if (!sandbox.ok) return sandbox.result;
  const out = new SplitCapture(limits.maxBytes);
  const explain = watchDenials(ctx, sandbox.plan);
  const r = await runShell({
    command: sub.command,
    cwd: actionDir(ctx, loaded),
    env: sandboxEnv(cliEnvironment(ctx, loaded, referenced), sandbox.plan),
    ...(sandbox.plan ? { confine: sandbox.plan } : {}),
    timeoutMs: limits.timeoutMs,
    timeoutSignal: 'SIGTERM',
    capture: out,
    signal: ctx.signal,
  });
  if (r.aborted) return explain(fail('CONFLICT', `Topic ${ctx.session.ref.topic} was closed while this command ran`), '');
  if (r.spawnError) return explain(spawnFailure(r.spawnError, sandbox.plan), '');
  if (r.timedOut) return explain(failure(loaded, 'TIMEOUT', `/act.${a.id} timed out after ${Math.round(limits.timeoutMs / 1000)} s`), '');
  const code = r.exitCode ?? 1;
  const stdout = trimNl(out.stdout.get().toString('utf8'));
  const body = trimNl(out.combined.get().toString('utf8'));
  return explain(finish({
    ctx, loaded, action: a, fields, warnings,
    plain: body === '' && code === 0 ? '(no output)' : body,
    response: { kind: 'cli', status: code, body, json: tryParseJson(stdout), stdout, stderr: trimNl(out.stderr.get().toString('utf8')), exitCode: code },
    failure: code === 0 ? null : { code: `EXIT_${code}`, message: `/act.${a.id} exited with status ${code}` },
  }), body);
}
