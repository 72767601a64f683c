import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HELP_ENTRIES } from '../../src/commands/helpText.js';
import { CMD_DESCRIPTION, TOOL_DESCRIPTION } from '../../src/domain/mcpTool.js';
import { HUB_NAMES } from '../../src/domain/topic.js';
import { bench, type CommandBench } from './support.js';

/*
 * A hint must never name a command that does not exist. Every command word
 * named in /help, the /help entries, the hub pages, `next:` and `Recovery:` lines (found in the
 * sources, so failure paths no test runs are covered too) and the MCP tool description must
 * resolve to a registered command of the running daemon.
 */

let b: CommandBench;
beforeAll(async () => { b = await bench({ agentId: 'hints' }); });
afterAll(async () => { await b?.close(); });

/**
 * Command words named in a text: `/word` or `/word.sub` at the start or after space, quote or
 * bracket, and not followed by another `/` (`/tmp/x` is a path).
 */
export function commandWords(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?<=^|[\s('"`[])\/([a-z][a-z0-9_-]*)(?:\.[a-z<][a-z0-9_<>-]*)?(?![\w/-])/g)) out.add(m[1]);
  return [...out];
}

/** Every .ts file under a folder. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** String literals of the source lines that build hints: recovery options, nextLine(...) and literal `next:` / `Recovery:` text. */
function hintLiterals(): Array<{ where: string; text: string }> {
  const out: Array<{ where: string; text: string }> = [];
  for (const file of sources(join(process.cwd(), 'src'))) {
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      if (!/recovery:|nextLine\(|next: |Recovery: /.test(line)) return;
      for (const m of line.matchAll(/'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g)) {
        out.push({ where: `${file.slice(process.cwd().length + 1)}:${i + 1}`, text: m[1] ?? m[2] ?? m[3] });
      }
    });
  }
  return out;
}

/** Words that answer something other than COMMAND_UNSUPPORTED when run bare in a fresh tab topic. */
const known = new Map<string, boolean>();
async function registered(word: string): Promise<boolean> {
  if (!known.has(word)) known.set(word, (await b.run('hint-probe', `/${word}`)).code !== 'COMMAND_UNSUPPORTED');
  return known.get(word) as boolean;
}

/** The words of `texts` that do not resolve, as `word (where)` strings. */
async function unresolved(texts: Array<{ where: string; text: string }>): Promise<string[]> {
  const bad: string[] = [];
  for (const t of texts) for (const w of commandWords(t.text)) if (!(await registered(w))) bad.push(`/${w} (${t.where})`);
  return bad;
}

describe('hint checker', () => {
  it('the word finder sees command words and ignores paths and URLs', () => {
    expect(commandWords('next: /events.read <id> · /act.<id> --help · /ls ~/notes/a.md')).toEqual(['events', 'act', 'ls']);
    expect(commandWords('Recovery: /install <source> --app')).toEqual(['install']);
    expect(commandWords('Webhook: http://127.0.0.1:3923/webhook/wh_x and ~/notes/plan.md, app:x/page.md, Home: /tmp/a')).toEqual([]);
  });

  it('the probe tells a registered command from an unbuilt one', async () => {
    expect(await registered('help')).toBe(true);
    expect(await registered('frobnicate')).toBe(false);
  });

  it('every command word of /help and of every /help entry is a registered command', async () => {
    const texts = [{ where: '/help', text: (await b.run('main', '/help')).body }];
    for (const word of Object.keys(HELP_ENTRIES)) texts.push({ where: `/help ${word}`, text: (await b.run('main', `/help ${word}`)).body });
    expect(await unresolved(texts)).toEqual([]);
  });

  it('every command word of every hub page is a registered command', async () => {
    const texts = [];
    for (const hub of HUB_NAMES) texts.push({ where: `${hub} hub`, text: (await b.run(hub, '/open')).body });
    expect(texts.every((t) => t.text.includes(' hub\n---\n'))).toBe(true);
    expect(await unresolved(texts)).toEqual([]);
  });

  it('every command word of the MCP tool description is a registered command', async () => {
    expect(await unresolved([{ where: 'tool description', text: TOOL_DESCRIPTION }, { where: 'cmd description', text: CMD_DESCRIPTION }])).toEqual([]);
  });

  it('every command word of a next: or Recovery: line in the sources is a registered command', async () => {
    const texts = hintLiterals();
    // The scan must find the hints it is meant to check (fails if the patterns stop matching).
    expect(texts.filter((t) => commandWords(t.text).length > 0).length).toBeGreaterThan(20);
    expect(await unresolved(texts)).toEqual([]);
  });

  it('every hint that promises a persistent shell is true: cwd and exports survive between /exec calls of a bash topic', async () => {
    const texts = [TOOL_DESCRIPTION, (await b.run('main', '/help exec')).body];
    // The promises are made …
    expect(texts.filter((t) => /persistent shell|survive|keeps? (one|its own|a) shell/i.test(t))).toHaveLength(2);
    // … and kept.
    await b.run('bash:hints', '/exec cd /tmp && export LOOM_HINT_PROBE=kept');
    expect((await b.run('bash:hints', '/exec pwd; echo "v=$LOOM_HINT_PROBE"')).body).toBe('exit: 0 | cwd: /tmp\n---\n/tmp\nv=kept');
    // Tab topics stay one-shot: /help exec says only bash:<name> topics keep a shell.
    await b.run('main', '/exec cd /tmp && export LOOM_HINT_PROBE=kept');
    expect((await b.run('main', '/exec echo "v=${LOOM_HINT_PROBE:-}"')).body).toBe('exit: 0 | cwd: ~\n---\nv=');
  });
});
