import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, freePort, tempDir } from '../helpers/daemon.js';

/*
 * The README's walkthrough, run exactly as written: every fenced block whose info string
 * is `sh test` is concatenated, in order, into one bash script with `set -e`, and run from the
 * repository root against a fresh daemon. What the test provides is the machine around the text:
 * `loom` on PATH (a shim for the built CLI), its own HOME, data directory and ports (SVC_PORT for the
 * daemon, NOTES_PORT for the demo API — and, since the app document's `env:` default names the
 * documented port 3930, the same port in the agent's env store, which outranks that default, as a
 * user who moved the API would /set it).
 */

const README = readFileSync(join(process.cwd(), 'README.md'), 'utf8');

/** The `sh test` blocks of a Markdown text, in order. */
export function testBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh test\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const dataDir = tempDir('loom-readme-');
let group: number | undefined;

/** Run `script` with bash in its own process group (so the demo API started with & can be killed with it). */
function runScript(script: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const p = spawn('/bin/bash', ['-c', script], { cwd: process.cwd(), env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    group = p.pid;
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    p.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const t = setTimeout(() => { if (group) process.kill(-group, 'SIGKILL'); }, 150_000);
    p.on('exit', (code) => {
      clearTimeout(t);
      // End what the script left in its group now, while the group id is still its own: killed later
      // (afterAll), the id may belong to another test's process group (pids wrap in a long CI run).
      try { process.kill(-(p.pid as number), 'SIGKILL'); } catch { /* the group is empty */ }
      group = undefined;
      resolve({ code, stdout, stderr });
    });
  });
}

afterAll(() => {
  // Whatever happened: nothing started by the walkthrough may outlive the test.
  try {
    if (group) process.kill(-group, 'SIGKILL');
  } catch {
    // The group has already exited.
  }
  const pidFile = join(dataDir, 'loom.pid');
  if (existsSync(pidFile)) {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
    } catch {
      // The daemon stopped on its own (loom stop ran).
    }
  }
});

describe('README quickstart: the walkthrough cannot drift', () => {
  it('the README has the walkthrough blocks, marked for testing', () => {
    const blocks = testBlocks(README);
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    expect(blocks.join('\n')).toContain('loom start');
    expect(blocks.at(-1)).toContain('loom stop');
  });

  it('when the sh test blocks run as written on a fresh daemon, then every command succeeds with the output the text describes', async () => {
    const bin = tempDir('loom-bin-');
    writeFileSync(join(bin, 'loom'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(join(bin, 'loom'), 0o755);
    const [port, notesPort] = [await freePort(), await freePort()];
    const state = join(dataDir, 'agents', 'leo', 'state');
    mkdirSync(state, { recursive: true });
    writeFileSync(join(state, 'env.json'), JSON.stringify({ version: 1, global: { NOTES_PORT: String(notesPort) } }));
    const script = ['set -e', ...testBlocks(README)].join('\n');
    const r = await runScript(script, {
      PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: tempDir('loom-home-'), SVC_PORT: String(port), SVC_DATA_DIR: dataDir,
      NOTES_PORT: String(notesPort), LOOM_AGENT_ID: '',
    });
    if (r.code !== 0) throw new Error(`walkthrough failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    const out = r.stdout;
    for (const line of [
      `loom started on http://127.0.0.1:${port}`,
      "Added agent 'leo' · home",
      'Loom commands',
      'Created ~/notes/plan.md (36 bytes, 4 lines)',
      'Created ~/notes/log.md (23 bytes, 1 line)',
      'Opened ~/notes/plan.md',
      `quickstart notes API on http://127.0.0.1:${notesPort} (token: demo-token)`,
      '$NOTE_TOKEN set (global)',
      'Added note 1: Buy milk',
      'Added note 2: Call Ann about the trip',
      'Notes, newest first:\n(none)',
      '- @note-2: Call Ann about the trip\n- @note-1: Buy milk',
      'Note 1 (',
      'Usage: /act.add <text>',
      `Installed app:notes (local, 1 file) from ${process.cwd()}/examples/quickstart/notes.md`,
      '"ok":true',
      'written by curl',
      'loom stopped',
    ]) expect(out).toContain(line);
    // @note-1 is note 1, wherever the newest-first list put it.
    expect(out).toMatch(/^Note 1 \(\S+\)\n\nBuy milk$/m);
    // /act.wc counts the words of plan.md: "# Plan - try Loom - read the inbox".
    expect(out).toMatch(/^9$/m);
    // The event posted to the webhook is listed, then acknowledged.
    expect(out).toMatch(/ {2}evt_\S+ {2}pending {2}\S+Z {2}Build finished: 3 warnings/);
    expect(out).toContain('Acked 1 event');
    // The request log shows requests, never the token or the note texts.
    expect(out).toMatch(/ POST +200 +\d+ ms +\/exec +leo +main +\//);
    const log = readFileSync(join(dataDir, 'logs', 'requests.log'), 'utf8');
    for (const secret of ['demo-token', 'Buy milk', 'written by curl']) expect(log).not.toContain(secret);
    expect(r.stderr).not.toContain('ERROR(');
  }, 180_000);
});
