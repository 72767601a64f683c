import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { CLI, freePort, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { loom } from './support.js';

let d: RunningDaemon;
const dirs: string[] = [];
beforeAll(async () => {
  d = await startDaemon();
  dirs.push(d.dataDir);
  const c = new LoomClient(d.base);
  for (const id of ['leo', 'ana']) await c.registerAgent({ agent_id: id });
  await c.openSession('leo', 'research');
});
afterAll(async () => {
  await d?.kill();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The words `loom __complete` offers for the line (the word under the cursor last). */
async function offered(words: string[], env: Record<string, string> = {}, daemon: { port: number; dataDir: string } = d): Promise<string[]> {
  const r = await loom(daemon, ['__complete', ...words], env);
  expect([r.code, r.stderr]).toEqual([0, '']);
  return r.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]);
}

/** A folder with a `loom` command on it: the built CLI, or a stand-in printing fixed candidates. */
function binWith(script: string): string {
  const bin = tempDir('loom-bin-');
  dirs.push(bin);
  writeFileSync(join(bin, 'loom'), script);
  chmodSync(join(bin, 'loom'), 0o755);
  return bin;
}

/** What the bash script completes for `line` (cursor at its end), with `bin` first on PATH. */
function bashCompletes(bin: string, line: string): string[] {
  const script = 'eval "$(loom completion bash)"; COMP_LINE="$LINE"; COMP_POINT=${#COMP_LINE}; _loom_complete; printf "%s\\n" "${COMPREPLY[@]}"';
  const r = spawnSync('bash', ['--norc', '-c', script], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, LINE: line, SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, LOOM_AGENT_ID: 'leo' }, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').filter(Boolean);
}

describe('loom completion bash|zsh|fish', () => {
  it.each([
    ['bash', '# loom completion for bash.', 'complete -o default -o bashdefault -F _loom_complete loom'],
    ['zsh', '#compdef loom', 'compdef _loom loom'],
    ['fish', '# loom completion for fish.', "complete -c loom -f -a '(__loom_complete)'"],
  ])('when asked for %s, then the script is printed, calling loom __complete', async (shell, first, registers) => {
    const r = await loom(d, ['completion', shell]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout.startsWith(first)).toBe(true);
    expect(r.stdout).toContain(registers);
    expect(r.stdout).toContain('command loom __complete');
  });

  it('when the bash script is checked with bash -n, then it parses', async () => {
    const r = await loom(d, ['completion', 'bash']);
    const check = spawnSync('bash', ['-n'], { input: r.stdout, encoding: 'utf8' });
    expect([check.status, check.stderr]).toEqual([0, '']);
  });

  const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;

  it.each(['zsh', 'fish'])('when %s is installed, then its script parses (zsh -n, fish -n)', async (shell) => {
    if (!has(shell)) return;
    const r = await loom(d, ['completion', shell]);
    const file = join(binWith(''), `loom.${shell}`);
    writeFileSync(file, r.stdout);
    const check = spawnSync(shell, ['-n', file], { encoding: 'utf8' });
    expect([check.status, check.stderr]).toEqual([0, '']);
  });

  it('when fish is installed, then its script completes subcommands and agents through the built CLI', () => {
    if (!has('fish')) return;
    const bin = binWith(`#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    const r = spawnSync('fish', ['--no-config', '-c', 'loom completion fish | source; complete -C "loom agent u"; complete -C "loom --agent a"'], {
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir }, encoding: 'utf8',
    });
    expect(r.stdout).toBe('use\tMake <id> the default agent of this CLI\nana\tagent\n');
  });

  it('when the shell is unknown or missing, then a usage error (exit 2)', async () => {
    expect(await loom(d, ['completion', 'ksh'])).toEqual({ code: 2, stdout: '', stderr: "loom: unknown shell 'ksh' (use bash, zsh or fish)\n" });
    expect(await loom(d, ['completion'])).toEqual({ code: 2, stdout: '', stderr: "loom: missing required argument 'shell'\n" });
  });
});

describe('loom __complete', () => {
  it('when nothing is typed yet, then the subcommands of the tree (hidden ones not), and no daemon is needed', async () => {
    const none = { port: await freePort(), dataDir: d.dataDir };
    const words = await offered([''], {}, none);
    expect(words).toEqual(expect.arrayContaining(['start', 'stop', 'status', 'agent', 'install', 'replay', 'trace', 'completion']));
    expect(words).not.toContain('__complete');
    expect(await offered(['st'], {}, none)).toEqual(['start', 'stop', 'status']);
    expect(await offered(['agent', 'u'], {}, none)).toEqual(['use']);
    expect(await offered(['completion', ''], {}, none)).toEqual(['bash', 'zsh', 'fish']);
    expect(await offered(['install', '--l'], {}, none)).toEqual(['--link', '--local']);
    expect(await offered(['--wire', ''], {}, none)).toEqual(['agent', 'user']);
  });

  it('when the daemon runs, then agents (after --agent and agent use) and the agent\'s topics come from it', async () => {
    expect(await offered(['--agent', ''])).toEqual(['ana', 'leo']);
    expect(await offered(['agent', 'use', 'l'])).toEqual(['leo']);
    expect(await offered(['--agent', 'leo', 're'])).toEqual(['replay', 'research']);
    expect(await offered(['re'], { LOOM_AGENT_ID: 'leo' })).toEqual(['replay', 'research']);
    expect(await offered(['re'], { LOOM_AGENT_ID: 'ana' })).toEqual(['replay']);
    expect(await offered(['--agent=leo', 're'])).toEqual(['replay', 'research']);
    // The port typed on the line wins, as it would for the command.
    const elsewhere = { port: await freePort(), dataDir: d.dataDir };
    expect(await offered(['--port', String(d.port), '--agent', ''], {}, elsewhere)).toEqual(['ana', 'leo']);
    expect(await offered(['--agent', ''], {}, elsewhere)).toEqual([]);
  });

  it('when the bash script runs the built CLI, then it completes subcommands and agents', () => {
    const bin = binWith(`#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    expect(bashCompletes(bin, 'loom agent u')).toEqual(['use']);
    expect(bashCompletes(bin, 'loom --agent a')).toEqual(['ana']);
  });

  it('when a candidate holds a colon, then bash gets only the part after the typed colon', () => {
    const bin = binWith(`#!/bin/sh\n[ "$1" = completion ] && exec "${process.execPath}" "${CLI}" "$@"\nprintf 'app:notes\\ttopic\\napp:news\\ttopic\\n'\n`);
    expect(bashCompletes(bin, 'loom app:n')).toEqual(['notes', 'news']);
  });
});
