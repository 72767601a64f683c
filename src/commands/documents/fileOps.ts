import { lstatSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fail, type CommandResult } from '../../domain/result.js';
import type { SessionState } from '../../domain/session.js';
import { displayOf, isRefusal, resolveInWorkspace } from '../../effects/workspace.js';
import { writeFileAtomic } from '../../effects/atomicFile.js';
import { readAgentFile } from '../../effects/agentFile.js';
import { FILE_COMMAND_MAX_BYTES, isFileRefusal, notRegularText } from '../../domain/agentFile.js';
import type { CommandContext } from '../types.js';
import { DOC_MAX_BYTES, looksBinary, sha256 } from './fetch.js';
import { dropUndoCopy, keepUndoCopy } from '../../effects/undoCopies.js';
import { fileNotFound, refusalResult } from './targets.js';

/** A path of a file command after the workspace policy. */
export interface FilePath {
  abs: string;
  display: string;
}

/**
 * Resolve a file command's path (behaviour.md §1.4, §2.5): outside → FORBIDDEN; NUL, a name or
 * path too long for the file system, a symlink loop → INVALID_PATH.
 */
export function resolveFile(ctx: CommandContext, input: string): FilePath | CommandResult {
  const ws = resolveInWorkspace(ctx.agent, ctx.session.baseDir, input);
  return isRefusal(ws) ? refusalResult(ws) : ws;
}

/**
 * An existing file's bytes, or null when it does not exist; failures for folders, anything but a
 * regular file (behaviour.md §16), files over 10 MiB and binary files.
 */
export function readExisting(p: FilePath): Buffer | null | CommandResult {
  const r = readAgentFile(p.abs, FILE_COMMAND_MAX_BYTES);
  if (isFileRefusal(r)) {
    if (r.refused === 'missing') return null;
    if (r.refused === 'directory') return fail('INVALID_PATH', `Is a directory: ${p.display}`);
    if (r.refused === 'not_regular') return fail('INVALID_PATH', notRegularText(p.display));
    return fail('INVALID_TARGET', `Not a text file: ${p.display} (over 10 MiB)`);
  }
  if (looksBinary(r.data)) return fail('INVALID_TARGET', `Not a text file: ${p.display}`);
  return r.data;
}

/** A file blocking a parent folder of a file to create: INVALID_PATH `Not a directory: <parent>`. */
export function parentProblem(ctx: CommandContext, p: FilePath): CommandResult | null {
  for (let d = dirname(p.abs); d !== dirname(d); d = dirname(d)) {
    try {
      return statSync(d).isDirectory() ? null : fail('INVALID_PATH', `Not a directory: ${displayOf(d, ctx.agent.home)}`);
    } catch (err) {
      // Missing folders are created by the write; keep looking for the nearest existing one
      // (ENOTDIR: a file further up stands in the way; the loop reaches it).
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
    }
  }
  return null;
}

/** The file must exist: NOT_FOUND with `/ls <parent>` recovery otherwise (behaviour.md §2.5). */
export function readRequired(ctx: CommandContext, p: FilePath): Buffer | CommandResult {
  const r = readExisting(p);
  return r === null ? fileNotFound(p.abs, ctx.agent.home) : r;
}

/** Number of lines of a text: a final `\n` ends the last line; the empty text has 0 lines. */
export function countLines(text: string): number {
  if (text === '') return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

/** Lines of a text without the terminator of the last one. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const l = text.split('\n');
  if (text.endsWith('\n')) l.pop();
  return l;
}

/** behaviour.md §2.5 stale guard: the topic must have read the file's current content. */
export function staleGuard(s: SessionState, p: FilePath, current: Buffer): CommandResult | null {
  const rec = s.reads.get(p.abs);
  const recovery = `/edit ${p.display}, then repeat; or add --force`;
  if (rec === undefined) return fail('CONFLICT', `${p.display} was not read in this topic`, { recovery });
  if (rec !== sha256(current)) return fail('CONFLICT', `${p.display} changed since it was read in this topic`, { recovery });
  return null;
}

/** Record a read of `content` (behaviour.md §2.5 read records). */
export function recordRead(ctx: Pick<CommandContext, 'change'>, p: FilePath, content: Buffer): void {
  ctx.change({ type: 'session.read', path: p.abs, hash: sha256(content) });
}

/** behaviour.md §2.5: undo records hold files up to 5 MiB. */
export const UNDO_MAX_BYTES = DOC_MAX_BYTES;

/**
 * Write a file atomically keeping its mode (new files 0644, missing folders created), then say the
 * read record and the undo record changed (the content before kept as a copy in the agent's state
 * folder first, so a failed copy leaves the file untouched). Returns the suffix to append when the
 * edit is not undoable.
 */
export function commitWrite(ctx: CommandContext, p: FilePath, o: { command: string; before: Buffer | null; after: Buffer }): string {
  let mode = 0o644;
  try {
    mode = lstatSync(p.abs).mode & 0o7777;
  } catch (err) {
    // A new file: the default mode applies.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const undoable = o.before === null || o.before.length <= UNDO_MAX_BYTES;
  const place = { dataDir: ctx.services.info.dataDir, wire: ctx.services.info.wire, agentId: ctx.agent.id, sessionId: ctx.session.id };
  const old = ctx.session.undo.find((u) => u.path === p.abs)?.copy ?? null;
  const copy = undoable && o.before !== null ? keepUndoCopy(place, p.abs, o.before) : null;
  try {
    mkdirSync(dirname(p.abs), { recursive: true, mode: 0o755 });
    writeFileAtomic(p.abs, o.after, mode);
  } catch (err) {
    // Nothing changed: the earlier record (and its copy) stays, this edit's copy goes.
    if (copy !== null) dropUndoCopy(copy);
    throw err;
  }
  // The earlier edit's record is replaced by this one: its copy is no longer needed.
  if (old !== null) dropUndoCopy(old);
  const hash = sha256(o.after);
  const undo = undoable ? { path: p.abs, display: p.display, command: o.command, afterHash: hash, copy } : null;
  ctx.change({ type: 'session.edited', path: p.abs, hash, undo });
  return undoable ? '' : ' (not undoable: file over 5 MiB)';
}

/** `<n> lines` / `1 line`. */
export const linesText = (n: number) => `${n} ${n === 1 ? 'line' : 'lines'}`;
/** `<n> bytes` / `1 byte`. */
export const bytesText = (n: number) => `${n} ${n === 1 ? 'byte' : 'bytes'}`;
