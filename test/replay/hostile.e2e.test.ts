import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';

jest.setTimeout(120000);

/*
 * loom replay (behaviour.md §14.2, §14.3) with hostile trace files, black box against a running
 * daemon (--against): a step that cannot be done safely fails with one line (exit 1), a line that
 * can never be a step is refused with its number (exit 2), and nothing reaches the terminal raw.
 */

const dir = tempDir('loom-replay-hostile-');
let d: RunningDaemon;
let home = '';

/** Write `steps` (objects, or raw lines) as a trace and replay it against the test daemon. */
async function replayLines(name: string, steps: Array<Record<string, unknown> | string>, args: string[] = []) {
  const file = join(dir, `${name}.jsonl`);
  writeFileSync(file, steps.map((s) => (typeof s === 'string' ? s : JSON.stringify(s))).join('\n') + '\n');
  return { file, ...(await runCli(['replay', file, '--against', d.base, ...args], {}, 60000)) };
}

// The escape sequences a hostile trace would send: retitle the window, clear the screen (7- and 8-bit).
const ESC_CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

beforeAll(async () => {
  d = await startDaemon();
  home = String((await new LoomClient(d.base).registerAgent({ agent_id: 'leo' })).body.home);
}, 60000);
afterAll(async () => { await d?.kill(); });

describe('loom replay with a hostile trace (behaviour.md §14.3)', () => {
  it('a file step through a symlinked folder in the home fails (exit 1); nothing is written outside', async () => {
    const outside = tempDir('loom-replay-outside-');
    symlinkSync(outside, join(home, 'lnkdir'));
    const r = await replayLines('symlink', [{ kind: 'agent', agent_id: 'leo' }, { kind: 'file', agent_id: 'leo', path: '~/lnkdir/pwned.txt', content: 'x' }]);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      '· 1 agent leo', '✗ 2 file ~/lnkdir/pwned.txt', '  not sent: file step ~/lnkdir/pwned.txt: refusing to write through a symlink (~/lnkdir)',
      '2 steps: 0 matched, 1 differed, 1 not compared', '',
    ]);
    expect(r.code).toBe(1);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('a file in the way or a folder at the path: the step fails with one line, no stack trace', async () => {
    writeFileSync(join(home, 'notes.txt'), 'keep');
    mkdirSync(join(home, 'adir'));
    const r = await replayLines('in-the-way', [
      { kind: 'file', agent_id: 'leo', path: '~/notes.txt/sub', content: 'x' },
      { kind: 'file', agent_id: 'leo', path: '~/adir', content: 'x' },
      { kind: 'file', agent_id: 'leo', path: '~/fine/ok.md', content: 'ok' },
    ]);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      '✗ 1 file ~/notes.txt/sub', '  not sent: file step ~/notes.txt/sub: ~/notes.txt is not a folder',
      '✗ 2 file ~/adir', '  not sent: file step ~/adir: ~/adir is a folder',
      '· 3 file ~/fine/ok.md',
      '3 steps: 0 matched, 2 differed, 1 not compared', '',
    ]);
    expect(r.code).toBe(1);
  });

  it.each([
    ['~/', /:2: "path" must name a file: ~\/ then names separated by single slashes, no \. parts \(got "~\/"\)\n$/],
    ['~', /:2: "path" must start with ~\/ and stay inside the home \(got "~"\)\n$/],
  ])('a file path that names no file (%s): exit 2 with the line, nothing run', async (path, stderr) => {
    const r = await replayLines('no-file', [{ kind: 'agent', agent_id: 'leo' }, { kind: 'file', agent_id: 'leo', path, content: 'x' }]);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(stderr);
  });

  it('control characters in trace-supplied text are shown escaped in step lines and diffs', async () => {
    const osc = '\u001b]0;pwned\u0007';
    const r = await replayLines('escapes', [
      { kind: 'exec', agent_id: 'leo', topic: `main${osc}`, cmd: '/info' },
      { kind: 'exec', agent_id: 'leo', cmd: '/exec printf "%s\\n" hello \u001b[2J', expect: { content: 're: /exec printf\n\u001b[2Jhello\u009b2J' } },
      { kind: 'file', agent_id: 'leo', path: '~/a\u001b[2J.md', content: 'x' },
    ]);
    expect(r.stdout).not.toMatch(ESC_CONTROLS);
    expect(r.stdout).toContain('· 1 main\\x1b]0;pwned\\x07 /info → 400\n');
    expect(r.stdout).toContain('✗ 2 main /exec printf "%s\\n" hello \\x1b[2J\n');
    expect(r.stdout).toContain('\n-\\x1b[2Jhello\\x9b2J\n');
    expect(r.stdout).toContain('· 3 file ~/a\\x1b[2J.md\n');
    expect(r.code).toBe(1);
    const json = await runCli(['replay', r.file, '--against', d.base, '--json'], {}, 60000);
    expect(json.stdout).not.toMatch(ESC_CONTROLS);
    expect(JSON.parse(json.stdout.split('\n')[0])).toMatchObject({ topic: `main${osc}` });
  });

  it('a damaged line with raw escapes in it is reported escaped (exit 2)', async () => {
    // V8's message quotes the line (`Unexpected token '…', "<the line>" is not valid JSON`).
    const r = await replayLines('damaged-escapes', ['{"kind":"agent","agent_id":"leo"}', '\u001b]0;pwned\u0007 not JSON']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/:2: not valid JSON \(.*\\x1b\]0;pwned\\x07 not JSON/);
    expect(r.stderr).not.toMatch(ESC_CONTROLS);
  });

  it('a sleep beyond 2^31-1 ms: exit 2 with the line, no timer warning, nothing run', async () => {
    const r = await replayLines('long-sleep', [{ kind: 'agent', agent_id: 'leo' }, '{"kind":"sleep","ms":1e300}']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/:2: "ms" must be at most 2147483647 \(about 24\.8 days\) \(got 1e\+300\)\n$/);
    expect(r.stderr).not.toContain('TimeoutOverflowWarning');
  });

  it('an mcp step whose agent_id holds CR/LF: exit 2 naming the agent id and its line, not "daemon not reachable"', async () => {
    const r = await replayLines('crlf-agent', [{ kind: 'exec', via: 'mcp', agent_id: 'leo\r\nX-Evil: 1', cmd: '/info' }]);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/:1: "agent_id" must be an agent id \(letters, digits, \. _ -; up to 64\) \(got "leo\\r\\nX-Evil: 1"\)\n$/);
    expect(r.stderr).not.toContain('not reachable');
  });
});
