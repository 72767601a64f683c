import { VAR_NAME_RE } from '../domain/ids.js';
import { PERSISTENT_VAR_BYTES, SESSION_VAR_BYTES } from '../domain/limits.js';
import { scopeLabel, type EnvScope } from '../domain/ports.js';
import { confirm, content, fail, type CommandResult } from '../domain/result.js';
import { topicScope } from '../domain/topic.js';
import type { Command, CommandContext } from './types.js';

/** One parsed `/set` assignment (behaviour.md §6.4). */
export interface Assignment {
  kind: 'session' | 'persistent';
  name: string;
  value: string;
}

const USAGE = 'Usage: /set {name} = "value" or /set $NAME = "value"';

/** Parse a value: `"…"` with `\"` `\\` escapes, `'…'` without escapes, else the trimmed rest. */
function parseValue(raw: string): string | null {
  const v = raw.trim();
  if (v.startsWith('"')) {
    const m = /^"((?:[^"\\]|\\.)*)"$/.exec(v);
    return m ? m[1].replace(/\\(["\\])/g, '$1') : null;
  }
  if (v.startsWith("'")) {
    const m = /^'([^']*)'$/.exec(v);
    return m ? m[1] : null;
  }
  return v;
}

/** Parse a target `$NAME` / `{name}` (a bare NAME means $NAME only in fence info strings). */
function parseTarget(raw: string, bareIsPersistent: boolean): { kind: Assignment['kind']; name: string } | null {
  let m = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(raw);
  if (m) return { kind: 'persistent', name: m[1] };
  m = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(raw);
  if (m) return { kind: 'session', name: m[1] };
  if (bareIsPersistent && VAR_NAME_RE.test(raw)) return { kind: 'persistent', name: raw };
  return null;
}

/**
 * Parse all assignments of a `/set` (header rest + body). All lines are parsed before any is
 * applied; returns the 1-based failing line on error (behaviour.md §6.4).
 */
export function parseAssignments(args: string, body: string): { ok: true; list: Assignment[] } | { ok: false; line: number; text: string } {
  const lines = [args, ...(body === '' ? [] : body.split('\n'))];
  const list: Assignment[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '') continue;
    const fence = /^\s*(`{3,}|~{3,})\s*(\S+)\s*$/.exec(line);
    if (fence) {
      const target = parseTarget(fence[2], true);
      if (!target) return { ok: false, line: i + 1, text: line };
      const closeRe = new RegExp(`^\\s*${fence[1][0] === '`' ? '`' : '~'}{${fence[1].length},}\\s*$`);
      const start = i + 1;
      let end = start;
      while (end < lines.length && !closeRe.test(lines[end])) end++;
      if (end >= lines.length) return { ok: false, line: i + 1, text: line };
      if (target.name.length > 64) return { ok: false, line: i + 1, text: line };
      list.push({ ...target, value: lines.slice(start, end).join('\n') });
      i = end;
      continue;
    }
    const m = /^\s*(\$[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})\s*=\s*(.*)$/.exec(line);
    const target = m ? parseTarget(m[1], false) : null;
    const value = m ? parseValue(m[2]) : null;
    if (!m || !target || value === null || !VAR_NAME_RE.test(target.name)) return { ok: false, line: i + 1, text: line };
    list.push({ ...target, value });
  }
  return { ok: true, list };
}

/** behaviour.md §6.4 echo of a session value: cut to 80 characters + `…`, multi-line as `(<n> lines)`. */
function echoSession(name: string, value: string): string {
  if (value.includes('\n')) return `{${name}} = (${value.split('\n').length} lines)`;
  const chars = [...value];
  return `{${name}} = "${chars.length > 80 ? chars.slice(0, 80).join('') + '…' : value}"`;
}

/** behaviour.md §6.4 mask: first 2 characters then `…` (under 6 characters only `…`), plus the length. */
export function maskValue(value: string): string {
  const chars = [...value];
  return `"${chars.length < 6 ? '' : chars.slice(0, 2).join('')}…" (${chars.length} chars`;
}

function cascadeLabel(scope: EnvScope): string {
  if (scope.app && scope.config) return `config ${scope.app}:${scope.config} → app ${scope.app} → global`;
  if (scope.app) return `app ${scope.app} → global`;
  return 'global';
}

function listVariables(ctx: CommandContext): CommandResult {
  const scope = topicScope(ctx.session.ref);
  const lines: string[] = [];
  const session = [...ctx.session.vars.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (session.length > 0) lines.push('Session', ...session.map(([n, v]) => `  ${echoSession(n, v)}`));
  const persistent = ctx.services.env.effective(ctx.agent.id, scope);
  if (persistent.length > 0) {
    lines.push(`Persistent (${cascadeLabel(scope)})`, ...persistent.map((e) => `  $${e.name} = ${maskValue(e.value)}, ${scopeLabel(e.scope)})`));
  }
  if (lines.length === 0) lines.push('No variables in scope.');
  lines.push(...ctx.services.env.warnings(ctx.agent.id));
  return content(`Variables of ${ctx.session.ref.topic}`, lines);
}

/** `/set` (behaviour.md §6.4; spec §4.12.2). */
export const setCommand: Command = {
  name: 'set',
  takesBody: true,
  async run(ctx) {
    if (ctx.args.trim() === '' && ctx.body.trim() === '') return listVariables(ctx);
    const parsed = parseAssignments(ctx.args, ctx.body);
    if (!parsed.ok) return fail('INVALID_ARGS', `Invalid assignment on line ${parsed.line}: ${parsed.text}`, { details: [USAGE] });
    for (const a of parsed.list) {
      const cap = a.kind === 'session' ? SESSION_VAR_BYTES : PERSISTENT_VAR_BYTES;
      if (Buffer.byteLength(a.value) > cap) return fail('INVALID_ARGS', `Value of ${a.kind === 'session' ? `{${a.name}}` : `$${a.name}`} exceeds ${cap} bytes`);
    }
    const scope = topicScope(ctx.session.ref);
    const persistent = Object.fromEntries(parsed.list.filter((a) => a.kind === 'persistent').map((a) => [a.name, a.value]));
    if (Object.keys(persistent).length > 0) await ctx.services.env.set(ctx.agent.id, scope, persistent);
    const out: string[] = [];
    const values = parsed.list.filter((a) => a.kind === 'session').map((a) => [a.name, a.value] as const);
    if (values.length > 0) ctx.change({ type: 'session.set', scope: 'session', values });
    for (const a of parsed.list) {
      if (a.kind === 'session') {
        out.push(echoSession(a.name, a.value));
      } else {
        out.push(`$${a.name} set (${scopeLabel(scope)})`);
      }
    }
    return confirm(out);
  },
};

/** `/unset $A {b} …` (behaviour.md §6.5). */
export const unsetCommand: Command = {
  name: 'unset',
  async run(ctx) {
    const names = ctx.args.trim().split(/\s+/).filter(Boolean);
    if (names.length === 0) return fail('INVALID_ARGS', 'Usage: /unset $NAME | {name} …');
    const targets = names.map((n) => ({ raw: n, t: parseTarget(n, false) }));
    const bad = targets.find((x) => !x.t);
    if (bad) return fail('INVALID_ARGS', 'Usage: /unset $NAME | {name} …');
    const scope = topicScope(ctx.session.ref);
    const label = scopeLabel(scope);
    // Check session names first; the env store removes persistent names all-or-nothing.
    const missing = targets.find(({ t }) => t!.kind === 'session' && !ctx.session.vars.has(t!.name));
    if (missing) return fail('NOT_FOUND', `{${missing.t!.name}} is not set in session`);
    const persistent = targets.filter((x) => x.t!.kind === 'persistent').map((x) => x.t!.name);
    if (persistent.length > 0) {
      const absent = await ctx.services.env.unset(ctx.agent.id, scope, persistent);
      if (absent.length > 0) return fail('NOT_FOUND', `$${absent[0]} is not set in ${label}`);
    }
    const out: string[] = [];
    const cleared = targets.filter(({ t }) => t!.kind === 'session').map(({ t }) => t!.name);
    if (cleared.length > 0) ctx.change({ type: 'session.cleared', scope: 'session', names: cleared });
    for (const { t } of targets) {
      if (t!.kind === 'session') {
        out.push(`Unset {${t!.name}}`);
      } else out.push(`Unset $${t!.name} (${label})`);
    }
    return confirm(out);
  },
};
