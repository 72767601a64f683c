import { lstatSync, readdirSync, statSync } from 'node:fs';
import { content, fail, type CommandResult } from '../../domain/result.js';
import { isRefusal, resolveInWorkspace } from '../../effects/workspace.js';
import type { Command, CommandContext } from '../types.js';
import { refusalResult } from './targets.js';
import { parseFlags, splitArgs } from './args.js';

/** behaviour.md §2.5: most entries a listing shows. */
export const LS_MAX_ENTRIES = 500;

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The listing body of a folder (behaviour.md §2.5): folders, files, symlinks; dot entries only with `all`. */
export function listingLines(abs: string, all: boolean): string[] {
  const dirs: string[] = [];
  const files: string[] = [];
  const links: string[] = [];
  for (const name of readdirSync(abs)) {
    if (!all && name.startsWith('.')) continue;
    let st;
    try {
      st = lstatSync(`${abs}/${name}`);
    } catch (err) {
      // The entry vanished between readdir and lstat: it is simply not listed.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    if (st.isSymbolicLink()) links.push(`${name}@`);
    else if (st.isDirectory()) dirs.push(`${name}/`);
    else files.push(name);
  }
  const entries = [...dirs.sort(byCodePoint), ...files.sort(byCodePoint), ...links.sort(byCodePoint)];
  if (entries.length === 0) return ['  (empty)'];
  const shown = entries.slice(0, LS_MAX_ENTRIES).map((e) => `  ${e}`);
  if (entries.length > LS_MAX_ENTRIES) shown.push(`  … ${entries.length - LS_MAX_ENTRIES} more`);
  return shown;
}

/** `Listing <display>/` (the home is `~/`). */
export function listingSystem(display: string): string {
  return `Listing ${display.endsWith('/') ? display : `${display}/`}`;
}

/** `/ls [--all] [<path>]` (behaviour.md §2.5). */
export const lsCommand: Command = {
  name: 'ls',
  run(ctx: CommandContext): CommandResult {
    const words = splitArgs(ctx.args);
    const p = words ? parseFlags(words, [], ['all']) : null;
    if (!p || p.unknown.length || p.positional.length > 1) return fail('INVALID_ARGS', 'Usage: /ls [--all] [<path>]');
    const all = p.flags.has('all');
    const input = p.positional[0] ?? ctx.session.baseDir ?? ctx.agent.home;
    const ws = resolveInWorkspace(ctx.agent, ctx.session.baseDir, input);
    if (isRefusal(ws)) return refusalResult(ws);
    const display = ws.display;
    let isDir: boolean;
    try {
      isDir = statSync(ws.abs).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return fail('NOT_FOUND', `Not found: ${display}`);
      throw err;
    }
    if (!isDir) return fail('INVALID_PATH', `Not a directory: ${display}`);
    return content(listingSystem(display), listingLines(ws.abs, all));
  },
};
