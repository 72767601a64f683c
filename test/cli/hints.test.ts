import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program.js';

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/**
 * Whether `loom <words>` names a real command: global options first, then a subcommand path
 * (`agent capability mint`), or the one-command form `<topic> /<cmd>` / `<topic> -`.
 */
function resolves(program: Command, words: string[]): boolean {
  // A placeholder filled at run time (`loom ${near}`) cannot be judged here.
  if (words.some((w) => w.includes('${'))) return true;
  let i = 0;
  while (words[i]?.startsWith('-') && words[i] !== '-') i += words[i] === '--port' || words[i] === '--agent' || words[i] === '--wire' ? 2 : 1;
  if (i >= words.length) return true;
  let cmd = program.commands.find((c) => c.name() === words[i]);
  const arg = words[i + 1]?.replace(/^['"$]+/, '');
  if (!cmd) return arg !== undefined && (arg.startsWith('/') || arg === '-');
  for (i++; i < words.length && cmd.commands.length > 0 && /^[a-z]/.test(words[i]); i++) {
    const next: Command | undefined = cmd.commands.find((c) => c.name() === words[i]);
    if (!next) return false;
    cmd = next;
  }
  return true;
}

describe('CLI hints name real commands (the import-cycle check is in test/architecture.test.ts)', () => {
  it('the resolver tells real commands from others', () => {
    const program = buildProgram();
    expect(resolves(program, ['agent', 'capability', 'mint', '--path'])).toBe(true);
    expect(resolves(program, ['--agent', 'leo', 'main', "'/open"])).toBe(true);
    expect(resolves(program, ['agent', 'capabilities'])).toBe(false);
    expect(resolves(program, ['frobnicate', 'x'])).toBe(false);
    expect(resolves(program, ['main'])).toBe(false);
  });

  it('when a message or hint tells the user to run `loom …`, then that command exists', () => {
    const program = buildProgram();
    const bad: string[] = [];
    let seen = 0;
    for (const file of tsFiles(resolve('src'))) {
      for (const m of readFileSync(file, 'utf8').matchAll(/(?:with|shell|mean|e\.g\.):? +loom ((?:[\w$.{}[\]/~<>-]+ ?)+)/g)) {
        const words = m[1].trim().split(/\s+/);
        seen++;
        if (!resolves(program, words)) bad.push(`${relative('src', file)}: loom ${m[1].trim()}`);
      }
    }
    expect(seen).toBeGreaterThan(8);
    expect(bad).toEqual([]);
  });

  it('when any --help is shown, then every example in it is a real command', () => {
    const program = buildProgram();
    const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)];
    const bad: string[] = [];
    // Examples are added as help text; render them through the public help output.
    const chunks: string[] = [];
    for (const c of all(program)) {
      let out = '';
      c.configureOutput({ writeOut: (s) => { out += s; } });
      c.outputHelp();
      chunks.push(out);
    }
    for (const text of chunks) {
      const ex = text.split('\nExamples:\n')[1] ?? '';
      for (const line of ex.split('\n').filter((l) => l.startsWith('  loom '))) {
        // One command per line (up to a `#` comment or `&&`).
        const words = line.trim().split(/\s+(?:#.*|&&.*)?/).filter(Boolean).slice(1);
        if (!resolves(program, words)) bad.push(line.trim());
      }
    }
    expect(chunks.filter((t) => t.includes('\nExamples:\n')).length).toBe(chunks.length);
    expect(bad).toEqual([]);
  });
});
