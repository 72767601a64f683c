import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/daemon.js';

/*
 * loom replay trusts nothing of its input's size (behaviour.md §14.2, §16): a FIFO or a device is
 * refused before it is read, a line over 16 MiB is refused without being read whole, a bad value is
 * quoted in at most 200 characters; `--update` keeps the trace file's mode.
 */

jest.setTimeout(120000);

const dir = tempDir('loom-replay-input-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const replay = (args: string[]) => runCli(['replay', ...args], {}, 60000);
const MIB = 1024 * 1024;

describe('loom replay refuses input it cannot bound', () => {
  it('/dev/zero and a FIFO: exit 2, "not a regular file", nothing read', async () => {
    expect(await replay(['/dev/zero'])).toEqual({ code: 2, stdout: '', stderr: 'loom replay: /dev/zero is not a regular file\n' });
    const fifo = join(dir, 'p.jsonl');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    expect(await replay([fifo])).toEqual({ code: 2, stdout: '', stderr: `loom replay: ${fifo} is not a regular file\n` });
  });

  it('a line over 16 MiB: exit 2 naming the line and the limit, without its content', async () => {
    const file = join(dir, 'long.jsonl');
    const fd = openSync(file, 'w');
    writeSync(fd, '{"seq":1,"kind":"agent","agent_id":"leo"}\n{"seq":2,"kind":"agent","agent_id":"');
    const chunk = Buffer.alloc(MIB, 'a');
    for (let i = 0; i < 30; i++) writeSync(fd, chunk);
    writeSync(fd, '"}\n');
    closeSync(fd);
    expect(await replay([file])).toEqual({ code: 2, stdout: '', stderr: `loom replay: ${file}:2: line is longer than 16 MiB\n` });
  });

  it('a bad value under the line limit is quoted in at most 200 characters', async () => {
    const file = join(dir, 'bad-id.jsonl');
    writeFileSync(file, `${JSON.stringify({ seq: 1, kind: 'agent', agent_id: 'x'.repeat(MIB) })}\n`);
    const r = await replay([file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`loom replay: ${file}:1: "agent_id" must be an agent id (letters, digits, . _ -; up to 64) (got "${'x'.repeat(200)}"… (${MIB} characters))\n`);
  });

  it('a line that is not JSON: V8\'s message is cut at 200 characters', async () => {
    const file = join(dir, 'not-json.jsonl');
    writeFileSync(file, `{"seq":1,"kind":"agent","agent_id":"leo",${'x'.repeat(MIB)}\n`);
    const r = await replay([file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^loom replay: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:1: not valid JSON \\(.{1,200}…?\\)\\n$`, 's'));
  });
});

describe('loom replay --update keeps the trace file\'s mode', () => {
  it('a 0640 trace stays 0640 after its expectations are rewritten', async () => {
    const file = join(dir, 'mode.jsonl');
    writeFileSync(file, `${JSON.stringify({ seq: 1, kind: 'agent', agent_id: 'leo' })}\n${JSON.stringify({ seq: 2, kind: 'exec', agent_id: 'leo', cmd: '/exec echo hi', expect: { status: 200, content: 'old' } })}\n`);
    chmodSync(file, 0o640);
    const r = await replay([file, '--update']);
    expect(r.stdout).toContain(`updated ${file}: 1 expectation written`);
    expect(statSync(file).mode & 0o7777).toBe(0o640);
    chmodSync(file, 0o600);
    await replay([file, '--update']);
    expect(statSync(file).mode & 0o7777).toBe(0o600);
  });
});
