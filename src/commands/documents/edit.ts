import { existsSync } from 'node:fs';
import { content, fail, type CommandResult } from '../../domain/result.js';
import { anchorIds, findAnchor } from '../../sfmd/anchors.js';
import { parseOffLoop } from './parseCache.js';
import type { Command, CommandContext } from '../types.js';
import { parseFlags, splitArgs } from './args.js';
import { recordRead, readRequired, resolveFile, splitLines, type FilePath } from './fileOps.js';
import { plural } from '../../domain/text.js';

const USAGE = 'Usage: /edit <file>[#<anchor>] [--lines a-b]';
/** behaviour.md §2.5: most lines one /edit view shows. */
export const EDIT_MAX_LINES = 2000;

/** Parse `a-b` or `a` (1-based, a ≤ b); null when malformed. */
export function parseRange(v: string): { a: number; b: number } | null {
  const m = /^(\d+)(?:-(\d+))?$/.exec(v.trim());
  if (!m) return null;
  const a = Number(m[1]);
  const b = m[2] === undefined ? a : Number(m[2]);
  return a >= 1 && a <= b ? { a, b } : null;
}

/** `Lines a-b are outside <display> (n lines)` (behaviour.md §2.5). */
export function outsideLines(p: FilePath, r: { a: number; b: number }, n: number): CommandResult {
  return fail('INVALID_ARGS', `Lines ${r.a}-${r.b} are outside ${p.display} (${plural(n, 'line')})`, { recovery: `/edit ${p.display}` });
}

/** Numbered lines a..b (1-based), numbers right-aligned to the widest shown. */
function numbered(lines: string[], a: number, b: number): string[] {
  const w = String(b).length;
  const out: string[] = [];
  for (let n = a; n <= b; n++) out.push(`${String(n).padStart(w)} | ${lines[n - 1]}`);
  return out;
}

/** Split `file#anchor` unless the whole text names an existing file. */
function splitAnchor(ctx: CommandContext, input: string): { file: string; anchor: string | null } {
  const i = input.lastIndexOf('#');
  if (i <= 0) return { file: input, anchor: null };
  const whole = resolveFile(ctx, input);
  if (!('ok' in whole) && existsSync(whole.abs)) return { file: input, anchor: null };
  return { file: input.slice(0, i), anchor: input.slice(i + 1) };
}

/** `/edit <file>[#<anchor>] [--lines a-b]` (behaviour.md §2.5): a numbered view; records the read. */
export const editCommand: Command = {
  name: 'edit',
  async run(ctx) {
    const words = splitArgs(ctx.args);
    const p = words ? parseFlags(words, ['lines'], []) : null;
    if (!p || p.unknown.length || p.positional.length !== 1) return fail('INVALID_ARGS', USAGE);
    const { file, anchor } = splitAnchor(ctx, p.positional[0]);
    const fp = resolveFile(ctx, file);
    if ('ok' in fp) return fp;
    const buf = readRequired(ctx, fp);
    if ('ok' in buf) return buf;
    const text = buf.toString('utf8');
    const lines = splitLines(text);
    const n = lines.length;
    recordRead(ctx, fp, buf);
    let range: { a: number; b: number } | null = null;
    let title: string;
    if (anchor !== null) {
      const doc = await parseOffLoop(text);
      const at = findAnchor(doc, anchor);
      if (!at) {
        const ids = anchorIds(doc);
        return fail('NOT_FOUND', `Anchor not found: #${anchor} in ${fp.display}`, { details: [ids.length ? `Anchors: ${ids.slice(0, 30).map((i) => `#${i}`).join(', ')}` : 'This document has no anchors.'] });
      }
      range = { a: at.startLine, b: Math.min(at.endLine, n) };
      title = `${fp.display}#${anchor} (lines ${range.a}-${range.b} of ${n})`;
    } else if (p.flags.has('lines')) {
      range = parseRange(String(p.flags.get('lines')));
      if (!range) return fail('INVALID_ARGS', `Invalid --lines value: ${String(p.flags.get('lines'))} (use a-b)`);
      if (range.a > n) return outsideLines(fp, range, n);
      range.b = Math.min(range.b, n);
      title = `${fp.display} (lines ${range.a}-${range.b} of ${n})`;
    } else {
      title = `${fp.display} (${n} ${n === 1 ? 'line' : 'lines'})`;
    }
    const a = range?.a ?? 1;
    const b = range?.b ?? n;
    if (b < a) return content(title, []);
    const last = Math.min(b, a + EDIT_MAX_LINES - 1);
    const out = numbered(lines, a, last);
    if (last < b) out.push(`… ${plural(b - last, 'more line')}; /edit ${fp.display} --lines ${last + 1}-${Math.min(b, last + EDIT_MAX_LINES)}`);
    return content(title, out);
  },
};
