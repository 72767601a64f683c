import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { freePort, runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';

// Each replay starts a fresh daemon of its own: seconds each on a busy machine.
jest.setTimeout(180000);

/*
 * loom replay (behaviour.md §14.3), black box: traces recorded by the built daemon are replayed by the
 * built CLI, which starts (and stops) a fresh daemon of its own unless given --against.
 */

const dir = tempDir('loom-replay-test-');
const replay = (args: string[], env: Record<string, string> = {}) => runCli(['replay', ...args], { TOKEN: '', ...env }, 60000);

let d: RunningDaemon;
let plain = '';
let secret = '';

async function record(c: LoomClient, agent: string, run: (a: LoomClient) => Promise<void>): Promise<string> {
  const id = (await c.startTrace({ agent_id: agent })).body.trace_id;
  await run(new LoomClient(c.baseUrl, agent));
  await c.stopTrace(id);
  return (await c.getTrace(id)).text;
}

beforeAll(async () => {
  d = await startDaemon();
  const c = new LoomClient(d.base);
  const home = String((await c.registerAgent({ agent_id: 'leo' })).body.home);
  writeFileSync(join(home, 'w.md'), '# Weather\n\nSunny, 21 degrees.\n');
  plain = join(dir, 'plain.jsonl');
  writeFileSync(plain, await record(c, 'leo', async (leo) => {
    await leo.exec('main', '/open ~/w.md', 'r1');
    await leo.exec('main', '/exec echo hello', 'r2');
    await leo.exec('main', '/set {x} = "1"', 'r3');
    await leo.mcpCall('main', '/info');
  }));
  secret = join(dir, 'secret.jsonl');
  writeFileSync(secret, await record(c, 'leo', async (leo) => {
    await leo.exec('notes', '/set $TOKEN = "tok-abcdef-123"', 'r1');
    await leo.exec('notes', '/set', 'r2');
  }));
}, 60000);
afterAll(async () => { await d?.kill(); });

describe('loom replay (behaviour.md §14.3)', () => {
  it('a recorded trace replays on a fresh daemon: exit 0, one line per step, the summary', async () => {
    const r = await replay([plain]);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      '· 1 agent leo', '· 2 file ~/w.md', '✓ 3 main /open ~/w.md', '✓ 4 main /exec echo hello', '✓ 5 main /set {x} = "1"', '✓ 6 main (mcp) /info',
      '6 steps: 4 matched, 0 differed, 2 not compared', '',
    ]);
    expect(r.code).toBe(0);
  });

  it('one changed content line: exit 1 with a diff naming the step; --update, then exit 0', async () => {
    const copy = join(dir, 'changed.jsonl');
    const text = readFileSync(plain, 'utf8');
    expect(text).toContain('---\\nhello"');
    writeFileSync(copy, text.replace('---\\nhello"', '---\\nHELLO"'));
    const r = await replay([copy]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('✗ 4 main /exec echo hello\n--- expected (step 4)\n+++ actual (step 4)\n@@ ');
    expect(r.stdout).toContain('\n-HELLO\n+hello\n');
    expect(r.stdout).toContain('6 steps: 3 matched, 1 differed, 2 not compared');
    const u = await replay([copy, '--update']);
    expect(u.code).toBe(0);
    expect(u.stdout).toContain('updated ');
    expect(readFileSync(copy, 'utf8')).toContain('---\\nhello"');
    expect((await replay([copy])).code).toBe(0);
  });

  it('a /set that needs ${env:TOKEN} fails clearly without it and passes with --set or the environment', async () => {
    const text = readFileSync(secret, 'utf8');
    expect(text).not.toContain('tok-abcdef-123');
    const without = await replay([secret]);
    expect(without.code).toBe(1);
    expect(without.stdout).toContain('✗ 2 notes /set $TOKEN = ${env:TOKEN}\n  not sent: ${env:TOKEN} is not set: export TOKEN=… or pass --set TOKEN=…\n');
    const withSet = await replay([secret, '--set', 'TOKEN=tok-abcdef-123', '--json']);
    expect(withSet.code).toBe(0);
    const lines = withSet.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.result ?? l.summary)).toEqual(['not_compared', 'matched', 'matched', { steps: 3, matched: 2, differed: 0, not_compared: 1 }]);
    expect(lines[1]).toMatchObject({ seq: 2, kind: 'exec', via: 'exec', agent_id: 'leo', topic: 'notes', cmd: '/set $TOKEN = ${env:TOKEN}', status: 200 });
    // A different value of the same length shows the same mask; one of another length does not.
    expect((await replay([secret], { TOKEN: 'tok-zzzzzz-999' })).code).toBe(0);
    expect((await replay([secret, '--set', 'TOKEN=short-one'])).code).toBe(1);
  });

  it('a damaged line: exit 2 naming the file and line, nothing run', async () => {
    const bad = join(dir, 'damaged.jsonl');
    const lines = readFileSync(plain, 'utf8').split('\n');
    lines[3] = lines[3].slice(0, 40);
    writeFileSync(bad, lines.join('\n'));
    const r = await replay([bad]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^loom replay: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4: not valid JSON \\(`));
  });

  it.each([
    [['--speed', '0'], 'loom replay: --speed wants a number above 0, e.g. 1 or 0.5 (got "0")\n'],
    [['--set', '1X=2'], 'loom replay: --set wants NAME=value with a variable name (got "1X=2")\n'],
    [['--agent-map', 'leo'], 'loom replay: --agent-map wants recorded=agent pairs of agent ids (got "leo")\n'],
    [['--against', 'ftp://x'], 'loom replay: --against wants an http:// URL (got "ftp://x")\n'],
  ])('usage error %j: exit 2', async (args, stderr) => {
    const r = await replay([plain, ...args]);
    expect(r).toMatchObject({ code: 2, stdout: '', stderr });
  });

  it('a missing file or a daemon that does not answer: exit 2', async () => {
    const missing = await replay([join(dir, 'nope.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^loom replay: cannot read .*nope\.jsonl: ENOENT/);
    const port = await freePort();
    const gone = await replay([plain, '--against', `http://127.0.0.1:${port}`]);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(new RegExp(`^loom replay: daemon not reachable \\(cannot reach http://127.0.0.1:${port}`));
  });

  it('--against a running daemon with --agent-map runs the trace as another agent, registered if missing', async () => {
    const r = await replay([plain, '--against', d.base, '--agent-map', 'leo=ana']);
    expect(r.stdout.split('\n')[0]).toBe('· 1 agent ana');
    // ana's home has no w.md until the file step writes it; the answers then match leo's.
    expect(r.code).toBe(0);
    const sessions = (await new LoomClient(d.base).listSessions('ana')).body.sessions as Array<{ topic: string }>;
    expect(sessions.map((s) => s.topic)).toEqual(['main']);
  });

  it('--against with /exec steps only: the replay never loads fetch\'s HTTP stack (undici, ~50 ms of its start)', async () => {
    const script = join(dir, 'exec-only.jsonl');
    writeFileSync(script, ['{"kind":"exec","agent_id":"leo","topic":"main","cmd":"/help"}', '{"kind":"exec","agent_id":"leo","topic":"main","cmd":"/info"}'].join('\n') + '\n');
    const out = join(dir, 'loaded.txt');
    const preload = join(dir, 'record-builtins.cjs');
    writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.filter((m) => m.includes('undici')).join('\\n')));\n`);
    const r = await replay([script, '--against', d.base], { NODE_OPTIONS: `--require=${preload}` });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('2 steps: 0 matched, 0 differed, 2 not compared');
    // Node 24 loads undici for any ES import of node:http (its namespace reads every lazy export):
    // there the replay cannot avoid it, and the check says nothing.
    const probe = spawnSync(process.execPath, ['--input-type=module', '-e', "import 'node:http'; process.stdout.write(String(process.moduleLoadList.some((m) => m.includes('undici'))))"], { encoding: 'utf8' });
    if (probe.stdout === 'false') expect(readFileSync(out, 'utf8')).toBe('');
    else expect(probe.stdout).toBe('true');
  });

  it('a hand-written file without expect is a script: it runs, nothing is compared', async () => {
    const script = join(dir, 'script.jsonl');
    writeFileSync(script, '{"kind":"exec","cmd":"/write ~/s.md\\nfrom a script"}\n{"kind":"exec","cmd":"/open ~/s.md"}\n');
    const r = await replay([script, '--against', d.base]);
    expect(r.stdout).toBe('· 1 main /write ~/s.md\n· 2 main /open ~/s.md\n2 steps: 0 matched, 0 differed, 2 not compared\n');
    expect(r.code).toBe(0);
    const out = await new LoomClient(d.base, 'default').exec('main', '/info');
    expect(out.body).toContain('document:  ~/s.md');
  });

  it('a trace started while a topic had a document open reopens it first, so the answers match on a fresh daemon', async () => {
    const c = new LoomClient(d.base);
    const home = String((await c.registerAgent({ agent_id: 'ivy' })).body.home);
    writeFileSync(join(home, 'plan.md'), '# Plan\n\nShip it.\n');
    const ivy = new LoomClient(d.base, 'ivy');
    expect((await ivy.exec('main', '/open ~/plan.md')).head?.ok).toBe(true);
    const file = join(dir, 'opened-before.jsonl');
    writeFileSync(file, await record(c, 'ivy', async (a) => {
      await a.exec('main', '/write ~/todo.md\n- buy milk', 'r1');
      await a.exec('main', '/info', 'r2');
    }));
    const r = await replay([file]);
    expect(r.stdout.split('\n')).toEqual([
      '· 1 agent ivy', '· 2 file ~/plan.md', '· 3 main /open ~/plan.md', '✓ 4 main /write ~/todo.md', '✓ 5 main /info',
      '5 steps: 2 matched, 0 differed, 3 not compared', '',
    ]);
    expect(r.code).toBe(0);
  });
});
