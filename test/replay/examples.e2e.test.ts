import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';

// Each replay starts a fresh daemon of its own: seconds each on a busy machine.
jest.setTimeout(180000);

/*
 * The golden traces of examples/traces (behaviour.md §14.3: replayed by the test suite on every run)
 * and the README's "Traces" commands, run as a user runs them: `loom` on PATH is the built CLI.
 */

const root = process.cwd();
const tracesDir = join(root, 'examples', 'traces');

/** The ```sh blocks of the README's traces section. */
function readmeBlocks(): string[] {
  const text = readFileSync(join(root, 'README.md'), 'utf8');
  const section = text.slice(text.indexOf('<!-- section: traces -->'), text.indexOf('<!-- /section: traces -->'));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/** Run a shell block with `loom` on PATH; resolves with the exit code and output. */
function sh(block: string, opts: { cwd: string; env: Record<string, string> }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = tempDir('loom-bin-');
  writeFileSync(join(bin, 'loom'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, 'loom'), 0o755);
  return new Promise((resolve) => {
    const p = spawn('bash', ['-e', '-c', block], { cwd: opts.cwd, env: { ...process.env, LOOM_AGENT_ID: '', TODO_TOKEN: '', ...opts.env, PATH: `${bin}:${process.env.PATH}` }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    p.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const t = setTimeout(() => p.kill('SIGKILL'), 120000);
    p.on('exit', (code) => { clearTimeout(t); resolve({ code, stdout, stderr }); });
  });
}

let notes: ChildProcess | undefined;
let notesPort = 0;

beforeAll(async () => {
  notes = spawn(process.execPath, [join(tracesDir, 'notes-server.mjs')], { env: { ...process.env, NOTES_PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  notesPort = await new Promise<number>((resolve, reject) => {
    let out = '';
    notes?.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    notes?.once('exit', (code) => reject(new Error(`notes server exited ${code}`)));
  });
});
afterAll(() => { notes?.kill(); });

describe('examples/traces (golden traces)', () => {
  it('every golden trace is replayed by this suite', () => {
    const files = readdirSync(tracesDir).filter((f) => f.endsWith('.jsonl')).sort();
    expect(files).toEqual(['document-actions.jsonl', 'event-inbox.jsonl', 'mcp-busy.jsonl', 'queue-429.jsonl', 'variables.jsonl']);
    const readme = readmeBlocks().join('\n');
    for (const f of files.filter((x) => x !== 'document-actions.jsonl')) expect(readme).toContain(`loom replay examples/traces/${f}`);
    for (const f of files) {
      const header = JSON.parse(readFileSync(join(tracesDir, f), 'utf8').split('\n')[0]) as { note: string };
      expect(header.note).toContain(`loom replay examples/traces/${f}`);
    }
  });

  it('the document trace (HTTP and CLI actions) replays against the notes API: exit 0', async () => {
    const r = await runCli(['replay', 'examples/traces/document-actions.jsonl', '--set', `NOTES_PORT=${notesPort}`, '--set', 'NOTE_TOKEN=demo-token'], {}, 60000);
    expect(r.stdout).toContain('· 4 file ~/apps/notes.md\n✓ 5 main /open ~/apps/notes.md');
    expect(r.stdout).toContain('✓ 7 main /act.add "buy milk"');
    expect(r.stdout.trim().split('\n').pop()).toBe('14 steps: 11 matched, 0 differed, 3 not compared');
    expect(r.code).toBe(0);
  }, 90000);

  it('--speed 1 on the queue trace reproduces the 429 count exactly', async () => {
    const text = readFileSync(join(tracesDir, 'queue-429.jsonl'), 'utf8');
    const recorded = (text.match(/"expect":\{"status":429/g) ?? []).length;
    expect(recorded).toBe(2);
    const r = await runCli(['replay', 'examples/traces/queue-429.jsonl', '--speed', '1', '--json'], {}, 60000);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { status?: number; summary?: unknown });
    expect(lines.filter((l) => l.status === 429)).toHaveLength(recorded);
    expect(lines.filter((l) => l.status === 200)).toHaveLength(7);
    expect(r.code).toBe(0);
    // The human output says which steps were refused, on their ✓ lines.
    const text2 = await runCli(['replay', 'examples/traces/queue-429.jsonl', '--speed', '1'], {}, 60000);
    expect(text2.stdout).toContain('✓ 2 main /exec echo 7 → 429 QUEUE_FULL\n✓ 3 main /exec echo 8 → 429 QUEUE_FULL\n');
    expect(text2.stdout).toContain('✓ 5 main /exec echo 2\n');
  }, 90000);
});

describe('README "Traces" (copy-paste examples)', () => {
  let d: RunningDaemon;
  beforeAll(async () => { d = await startDaemon(); });
  afterAll(async () => { await d?.kill(); });

  it('record a session, replay it, replay it against the daemon as another agent, --json, --update', async () => {
    const [record, options] = readmeBlocks();
    const cwd = tempDir('loom-readme-');
    const env = { SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir };
    const r = await sh(record, { cwd, env });
    expect(r.stderr).toBe('wrote todo.jsonl (5 steps)\n');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('✓ 2 main /write ~/todo.md\n· 3 file ~/todo.md\n✓ 4 main /open ~/todo.md\n✓ 5 main /set $TODO_TOKEN = ${env:TODO_TOKEN}\n5 steps: 3 matched, 0 differed, 2 not compared');
    expect(readFileSync(join(cwd, 'todo.jsonl'), 'utf8')).not.toContain('s3cret-value');
    const o = await sh(options.replace('127.0.0.1:3923', `127.0.0.1:${d.port}`), { cwd, env: { ...env, TODO_TOKEN: 's3cret-value' } });
    expect(o.code).toBe(0);
    expect(o.stdout).toContain('· 1 agent ana');
    expect(o.stdout).toContain('{"summary":{"steps":5,"matched":3,"differed":0,"not_compared":2}}');
    expect(o.stdout).toContain('updated todo.jsonl: 3 expectations written');
  }, 180000);

  it('the golden traces replay on their own, as the README gives them', async () => {
    const [, , golden] = readmeBlocks();
    expect(golden.trim().split('\n')).toHaveLength(4);
    const r = await sh(golden, { cwd: root, env: {} });
    expect(r.stderr).toBe('');
    expect(r.stdout.match(/^\d+ steps: .*$/gm)).toEqual([
      '13 steps: 12 matched, 0 differed, 1 not compared',
      '10 steps: 9 matched, 0 differed, 1 not compared',
      '5 steps: 4 matched, 0 differed, 1 not compared',
      '12 steps: 11 matched, 0 differed, 1 not compared',
    ]);
    expect(r.code).toBe(0);
  }, 180000);
});
