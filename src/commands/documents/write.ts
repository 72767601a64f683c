import { existsSync, unlinkSync } from 'node:fs';
import { FILE_COMMAND_MAX_BYTES, isFileRefusal } from '../../domain/agentFile.js';
import { readAgentFile } from '../../effects/agentFile.js';
import { dirname } from 'node:path';
import { confirm, fail, type CommandResult } from '../../domain/result.js';
import { writeFileAtomic } from '../../effects/atomicFile.js';
import { displayOf } from '../../effects/workspace.js';
import type { Command, CommandContext } from '../types.js';
import { parseFlags, splitArgs, type Parsed } from './args.js';
import { outsideLines, parseRange } from './edit.js';
import { sha256 } from './fetch.js';
import {
  bytesText, commitWrite, countLines, linesText, parentProblem, readExisting, readRequired, resolveFile, splitLines, staleGuard, type FilePath,
} from './fileOps.js';
import { dropUndoCopy, readUndoCopy } from '../../effects/undoCopies.js';
import type { UndoRef } from '../../domain/session.js';

const USAGE = {
  write: 'Usage: /write <file> (content on the following lines)',
  append: 'Usage: /append <file> (content on the following lines)',
  replace: 'Usage: /replace <file> --lines a-b | [--all] --old "<text>" (new text on the following lines), or a conflict-marker body',
};

/** Parse a file command's arguments: exactly one path plus the given flags. */
function target(ctx: CommandContext, word: keyof typeof USAGE, valued: string[], bare: string[]): { p: FilePath; flags: Parsed['flags'] } | CommandResult {
  const words = splitArgs(ctx.args);
  const parsed = words ? parseFlags(words, valued, bare) : null;
  if (!parsed || parsed.unknown.length || parsed.positional.length !== 1) return fail('INVALID_ARGS', USAGE[word]);
  const p = resolveFile(ctx, parsed.positional[0]);
  if ('ok' in p) return p;
  return { p, flags: parsed.flags };
}

/** `/write [--force] <file>` + body (behaviour.md §2.5). */
export const writeCommand: Command = {
  name: 'write',
  takesBody: true,
  run(ctx) {
    const t = target(ctx, 'write', [], ['force']);
    if ('ok' in t) return t;
    const { p } = t;
    const before = readExisting(p);
    if (before !== null && 'ok' in before) return before;
    if (before === null) {
      const blocked = parentProblem(ctx, p);
      if (blocked) return blocked;
    }
    if (before !== null && before.length > 0 && !t.flags.has('force')) {
      const stale = staleGuard(ctx.session, p, before);
      if (stale) return stale;
    }
    const after = Buffer.from(ctx.body, 'utf8');
    const note = commitWrite(ctx, p, { command: '/write', before, after });
    const size = `${bytesText(after.length)}, ${linesText(countLines(ctx.body))}`;
    return confirm(before === null ? `Created ${p.display} (${size})${note}` : `Replaced ${p.display} (${size}; was ${bytesText(before.length)})${note}`);
  },
};

/**
 * A missing parent folder of a file `/append` would create: `>>` creates no folders either
 * (behaviour.md §2.5), so this is NOT_FOUND, and the recovery names the command that does.
 */
function missingParent(ctx: CommandContext, p: FilePath): CommandResult | null {
  const blocked = parentProblem(ctx, p);
  if (blocked) return blocked;
  const parent = dirname(p.abs);
  if (existsSync(parent)) return null;
  return fail('NOT_FOUND', `Folder not found: ${displayOf(parent, ctx.agent.home)}`, { recovery: `/write ${p.display} (creates missing folders)` });
}

/**
 * `/append <file>` + body (behaviour.md §2.5): like `>>`, creates a missing file (never a missing
 * folder); a non-empty file without a final newline gets one first.
 */
export const appendCommand: Command = {
  name: 'append',
  takesBody: true,
  run(ctx) {
    const t = target(ctx, 'append', [], []);
    if ('ok' in t) return t;
    const { p } = t;
    const before = readExisting(p);
    if (before !== null && 'ok' in before) return before;
    const add = Buffer.from(ctx.body, 'utf8');
    if (before === null) {
      const blocked = missingParent(ctx, p);
      if (blocked) return blocked;
      const note = commitWrite(ctx, p, { command: '/append', before: null, after: add });
      return confirm(`Created ${p.display} (${bytesText(add.length)}, ${linesText(countLines(ctx.body))})${note}`);
    }
    const sep = before.length > 0 && add.length > 0 && before[before.length - 1] !== 0x0a ? Buffer.from('\n') : Buffer.alloc(0);
    const after = Buffer.concat([before, sep, add]);
    const note = commitWrite(ctx, p, { command: '/append', before, after });
    return confirm(`Appended ${bytesText(add.length)} to ${p.display} (now ${bytesText(after.length)}, ${linesText(countLines(after.toString('utf8')))})${note}`);
  },
};

/** Count non-overlapping occurrences of `needle`. */
function occurrences(hay: string, needle: string): number {
  let n = 0;
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** Parse a conflict-marker body (behaviour.md §2.5) into old and new text, or null. */
function markers(body: string): { old: string; neu: string } | null {
  const lines = body.replace(/\n$/, '').split('\n');
  if (lines[0] !== '<<<<<<< old' || lines[lines.length - 1] !== '>>>>>>> new') return null;
  const mid = lines.indexOf('=======');
  if (mid < 1 || mid > lines.length - 2) return null;
  return { old: lines.slice(1, mid).join('\n'), neu: lines.slice(mid + 1, lines.length - 1).join('\n') };
}

/** `/replace <file> --lines a-b` + body: lines a..b replaced by the body's lines. */
function replaceLines(ctx: CommandContext, p: FilePath, before: Buffer, spec: string): CommandResult {
  const text = before.toString('utf8');
  const lines = splitLines(text);
  const r = parseRange(spec);
  if (!r) return fail('INVALID_ARGS', `Invalid --lines value: ${spec} (use a-b)`);
  if (r.b > lines.length) return outsideLines(p, r, lines.length);
  const stale = staleGuard(ctx.session, p, before);
  if (stale) return stale;
  const neu = splitLines(ctx.body);
  const out = [...lines.slice(0, r.a - 1), ...neu, ...lines.slice(r.b)];
  const trailing = text.endsWith('\n') && out.length > 0 ? '\n' : '';
  const after = Buffer.from(out.join('\n') + trailing, 'utf8');
  const note = commitWrite(ctx, p, { command: '/replace', before, after });
  const which = r.a === r.b ? `line ${r.a}` : `lines ${r.a}-${r.b}`;
  return confirm(`Replaced ${which} of ${p.display} with ${linesText(neu.length)} (now ${linesText(out.length)})${note}`);
}

/** Exact-text replacement (behaviour.md §2.5): one match, or all of them with `--all`. */
function replaceText(ctx: CommandContext, p: FilePath, before: Buffer, o: { old: string; neu: string; all: boolean }): CommandResult {
  const text = before.toString('utf8');
  const n = occurrences(text, o.old);
  if (n === 0) return fail('NOT_FOUND', `Text not found in ${p.display}`);
  if (n > 1 && !o.all) return fail('CONFLICT', `Text matches ${n} times in ${p.display}; add --all or include more context`);
  const out = o.all ? text.split(o.old).join(o.neu) : text.replace(o.old, () => o.neu);
  const note = commitWrite(ctx, p, { command: '/replace', before, after: Buffer.from(out, 'utf8') });
  return confirm(`Replaced ${n} ${n === 1 ? 'occurrence' : 'occurrences'} in ${p.display}${note}`);
}

/** `/replace` (behaviour.md §2.5): `--lines a-b`, `--old "<text>"`, or a conflict-marker body. */
export const replaceCommand: Command = {
  name: 'replace',
  takesBody: true,
  run(ctx) {
    const t = target(ctx, 'replace', ['lines', 'old'], ['all']);
    if ('ok' in t) return t;
    const { p, flags } = t;
    const lines = flags.get('lines');
    const old = flags.get('old');
    const mk = markers(ctx.body);
    const modes = [lines !== undefined, old !== undefined, mk !== null].filter(Boolean).length;
    if (modes !== 1 || old === '' || (lines !== undefined && flags.has('all'))) return fail('INVALID_ARGS', USAGE.replace);
    const before = readRequired(ctx, p);
    if ('ok' in before) return before;
    if (lines !== undefined) return replaceLines(ctx, p, before, String(lines));
    const pair = mk ?? { old: String(old), neu: ctx.body };
    if (pair.old === '') return fail('INVALID_ARGS', USAGE.replace);
    return replaceText(ctx, p, before, { ...pair, all: flags.has('all') });
  },
};

/** `/undo [<file>]` (behaviour.md §2.5): reverts the last edit of the file (or of the topic). */
export const undoCommand: Command = {
  name: 'undo',
  run(ctx) {
    const { undo } = ctx.session;
    const words = splitArgs(ctx.args);
    if (!words || words.length > 1) return fail('INVALID_ARGS', 'Usage: /undo [<file>]');
    let rec: UndoRef | undefined;
    if (words.length === 1) {
      const p = resolveFile(ctx, words[0].text);
      if ('ok' in p) return p;
      rec = undo.find((u) => u.path === p.abs);
    } else rec = undo.at(-1);
    if (!rec) return fail('NOT_FOUND', 'Nothing to undo.');
    // Removed, replaced by a FIFO or grown past the limit since the edit: a change after the edit (checked below).
    const read = readAgentFile(rec.path, FILE_COMMAND_MAX_BYTES);
    if (isFileRefusal(read) || sha256(read.data) !== rec.afterHash) return fail('CONFLICT', `${rec.display} changed after the edit; not undone`);
    if (rec.copy === null) {
      unlinkSync(rec.path);
      ctx.change({ type: 'session.undone', path: rec.path, hash: null });
      return confirm(`Undid ${rec.command} on ${rec.display} (file removed)`);
    }
    const before = readUndoCopy(rec.copy);
    if (before === null) {
      // The copy went with the agent's state folder: the record cannot be used.
      ctx.change({ type: 'session.undone', path: rec.path, hash: sha256(read.data) });
      return fail('NOT_FOUND', 'Nothing to undo.');
    }
    writeFileAtomic(rec.path, before, read.mode);
    dropUndoCopy(rec.copy);
    ctx.change({ type: 'session.undone', path: rec.path, hash: sha256(before) });
    return confirm(`Undid ${rec.command} on ${rec.display}`);
  },
};
