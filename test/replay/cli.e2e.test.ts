import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { CLI, freePort, runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';

jest.setTimeout(120000);

describe('loom trace start|stop|list|get (behaviour.md §14.1)', () => {
  let d: RunningDaemon;
  const loom = (args: string[]) => runCli(args, { SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, LOOM_AGENT_ID: '' });
  beforeAll(async () => {
    d = await startDaemon();
    await new LoomClient(d.base).registerAgent({ agent_id: 'leo' });
  });
  afterAll(async () => { await d?.kill(); });

  it('start -q prints the id; list shows it recording; stop counts its steps; get -o writes the file', async () => {
    const started = await loom(['trace', 'start', '--agent', 'leo', '--note', 'cli test', '-q']);
    const id = started.stdout.trim();
    expect(id).toMatch(/^trc_[0-9A-HJKMNP-TV-Z]{26}$/);
    await new LoomClient(d.base, 'leo').exec('main', '/help');
    const list = await loom(['--json', 'trace', 'list']);
    expect(JSON.parse(list.stdout).traces).toEqual([expect.objectContaining({ trace_id: id, agent_id: 'leo', note: 'cli test', stopped_at: null, steps: 2 })]);
    expect((await loom(['trace', 'list'])).stdout).toMatch(new RegExp(`^Traces \\(1\\)\\n  ${id}  leo  2 steps  \\d+ bytes  recording  "cli test"\\n$`));
    expect(await loom(['trace', 'stop', id])).toMatchObject({ code: 0, stdout: `Stopped ${id} (2 steps)\nsave it with: loom trace get ${id} -o ${id}.jsonl\n` });
    const file = join(tempDir(), 'out.jsonl');
    const got = await loom(['trace', 'get', id, '-o', file]);
    expect(got).toMatchObject({ code: 0, stdout: '', stderr: `wrote ${file} (2 steps)\n` });
    expect(readFileSync(file, 'utf8')).toBe((await new LoomClient(d.base).getTrace(id)).text);
  });

  it('an unknown id: exit 1 with the daemon\'s error; a bad agent id: exit 1 with the 400 text', async () => {
    expect(await loom(['trace', 'stop', 'trc_nope'])).toMatchObject({ code: 1, stdout: '', stderr: 'loom: Unknown trace: trc_nope\n' });
    expect(await loom(['trace', 'get', 'trc_nope'])).toMatchObject({ code: 1, stderr: 'loom: Unknown trace: trc_nope\n' });
    expect(await loom(['trace', 'start', '--agent', '../x'])).toMatchObject({ code: 1, stderr: 'loom: Invalid agent_id: ../x\n' });
  });
});

describe('loom daemon --record <file> (behaviour.md §14.1)', () => {
  it('records every agent from start-up into the file, flushed on shutdown', async () => {
    const dir = tempDir();
    const file = join(dir, 'session.jsonl');
    const port = await freePort();
    const proc = spawn(process.execPath, [CLI, 'daemon', '--quiet', '--record', file], { env: { ...process.env, SVC_PORT: String(port), SVC_DATA_DIR: join(dir, 'data') }, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        proc.stdout.on('data', (c: Buffer) => { out += c.toString(); if (out.includes('listening')) resolve(); });
        proc.once('exit', (code) => reject(new Error(`daemon exited ${code}`)));
      });
      const c = new LoomClient(`http://127.0.0.1:${port}`);
      await c.registerAgent({ agent_id: 'leo' });
      await c.registerAgent({ agent_id: 'ana' });
      await new LoomClient(c.baseUrl, 'leo').exec('main', '/help');
      await new LoomClient(c.baseUrl, 'ana').mcpCall('main', '/info');
      expect((await c.listTraces()).body.traces).toEqual([expect.objectContaining({ agent_id: null, topic: null, note: `loom daemon --record ${file}`, stopped_at: null })]);
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ loom_trace: 2, agent_id: null, note: `loom daemon --record ${file}` });
    expect(lines.slice(1).map((s) => `${s.kind} ${s.agent_id} ${s.via ?? ''} ${s.cmd ?? ''}`.trim())).toEqual(['agent leo', 'exec leo exec /help', 'agent ana', 'exec ana mcp /info']);
  });

  it('a file that already holds a recording: exit 2, and the file is left as it was', async () => {
    const dir = tempDir();
    const file = join(dir, 'session.jsonl');
    writeFileSync(file, '{"loom_trace":1}\n');
    const r = await runCli(['daemon', '--record', file], { SVC_PORT: String(await freePort()), SVC_DATA_DIR: join(dir, 'data') });
    expect(r).toMatchObject({ code: 2, stderr: `loom: cannot record to "${file}": it already holds 17 bytes (a recording is never written over); move it away or name another file\n` });
    expect(readFileSync(file, 'utf8')).toBe('{"loom_trace":1}\n');
  });

  it('a folder that does not exist: exit 2 before anything starts', async () => {
    const r = await runCli(['daemon', '--record', '/nonexistent-dir/x.jsonl'], { SVC_PORT: String(await freePort()), SVC_DATA_DIR: tempDir() });
    expect(r).toMatchObject({ code: 2, stderr: 'loom: cannot record to "/nonexistent-dir/x.jsonl": folder /nonexistent-dir does not exist\n' });
  });
});
