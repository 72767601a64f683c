import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { realpathSync } from 'node:fs';
import { bench, type CommandBench } from './support.js';

let b: CommandBench;
beforeAll(async () => { b = await bench(); });
afterAll(async () => { await b.close(); });

describe('behaviour.md §8.1–8.2 /exec one-shot', () => {
  it('when the command succeeds, then exit: 0 | cwd: ~, ---, the output without trailing newlines', async () => {
    const r = await b.run('main', '/exec echo hello; echo world; echo; echo');
    expect(r).toMatchObject({ ok: true, code: null });
    expect(r.body).toBe('exit: 0 | cwd: ~\n---\nhello\nworld');
    expect(r.content).toBe('re: /exec echo hello; echo world; echo; echo\nexit: 0 | cwd: ~\n---\nhello\nworld');
  });

  it('when the command prints nothing, then (no output)', async () => {
    expect((await b.run('main', '/exec true')).body).toBe('exit: 0 | cwd: ~\n---\n(no output)');
  });

  it('when the command exits non-zero, then EXIT_<n> and the three-line head, stderr merged', async () => {
    const r = await b.run('main', '/exec echo "grep: nofile: No such file or directory" >&2; exit 3');
    expect(r).toMatchObject({ ok: false, code: 'EXIT_3' });
    expect(r.body).toBe('ERROR(EXIT_3): command exited with status 3\nexit: 3 | cwd: ~\n---\ngrep: nofile: No such file or directory');
  });

  it('when the command exits non-zero without output, then (no output) follows the head', async () => {
    const r = await b.run('main', '/exec exit 255');
    expect(r.code).toBe('EXIT_255');
    expect(r.body).toBe('ERROR(EXIT_255): command exited with status 255\nexit: 255 | cwd: ~\n---\n(no output)');
  });

  it('when the command is killed by a signal s, then the status is 128+s', async () => {
    const r = await b.run('main', '/exec kill -TERM $$');
    expect(r.code).toBe('EXIT_143');
    expect(r.body.split('\n')[0]).toBe('ERROR(EXIT_143): command exited with status 143');
  });

  it('when the output has ANSI escapes and CR, then they are removed', async () => {
    const r = await b.run('main', "/exec printf '\\033[31mred\\033[0m\\r\\nplain\\r\\n\\033]0;title\\007done\\n'");
    expect(r.body).toBe('exit: 0 | cwd: ~\n---\nred\nplain\ndone');
  });

  it('when the command reads its environment, then HOME is the agent home and LOOM_AGENT_ID, LOOM_TOPIC, SVC_PORT are set', async () => {
    const r = await b.run('app:weather', '/exec printf "%s\\n" "$HOME" "$LOOM_AGENT_ID" "$LOOM_TOPIC" "$LOOM_HOME" "$SVC_PORT"; pwd -P');
    expect(r.body).toBe(`exit: 0 | cwd: ~\n---\n${b.home}\nleo\napp:weather\n${b.home}\n${b.t.port}\n${realpathSync(b.home)}`);
  });

  it('when variables were set, then neither session nor env-store values are exported', async () => {
    await b.run('main', '/set {sess} = "s"\n$PERSIST = "p"');
    const r = await b.run('main', '/exec echo "[${sess:-}][${PERSIST:-}]"');
    expect(r.body).toBe('exit: 0 | cwd: ~\n---\n[][]');
  });

  it('when stdin is read, then it is /dev/null (no wait)', async () => {
    expect((await b.run('main', '/exec cat; echo end')).body).toBe('exit: 0 | cwd: ~\n---\nend');
  });

  it('when the command has body lines, then they are part of the script', async () => {
    const r = await b.run('main', '/exec echo one\necho two\nif true; then\n  echo three\nfi');
    expect(r.body).toBe('exit: 0 | cwd: ~\n---\none\ntwo\nthree');
    expect(r.head.cmd).toBe('/exec echo one');
  });

  it('when the header is only /exec but the body holds the script, then the body runs', async () => {
    expect((await b.run('main', '/exec\necho from-body')).body).toBe('exit: 0 | cwd: ~\n---\nfrom-body');
  });

  it('when the text is quoted, then Loom passes it to bash unchanged', async () => {
    const r = await b.run('main', '/exec "echo hi"');
    expect(r.code).toBe('EXIT_127');
    expect(r.body).toMatch(/^ERROR\(EXIT_127\): command exited with status 127\nexit: 127 \| cwd: ~\n---\n.*echo hi: command not found$/);
  });

  it('when /exec has no text, then INVALID_ARGS Usage: /exec <shell command>', async () => {
    for (const cmd of ['/exec', '/exec   ', '/exec --timeout 5', '/exec --']) {
      const r = await b.run('main', cmd);
      expect(r).toMatchObject({ ok: false, code: 'INVALID_ARGS', body: 'ERROR(INVALID_ARGS): Usage: /exec <shell command>' });
    }
  });

  it.each(['0', '601', 'abc', '1.5', '-3'])('when --timeout is %s, then INVALID_ARGS --timeout must be 1 to 600 seconds', async (v) => {
    const r = await b.run('main', `/exec --timeout ${v} echo hi`);
    expect(r).toMatchObject({ ok: false, code: 'INVALID_ARGS', body: 'ERROR(INVALID_ARGS): --timeout must be 1 to 600 seconds' });
  });

  it('when --timeout is in range, then the command runs; -- passes a literal --timeout', async () => {
    expect((await b.run('main', '/exec --timeout 600 echo ok')).body).toBe('exit: 0 | cwd: ~\n---\nok');
    expect((await b.run('main', '/exec -- echo --timeout 0')).body).toBe('exit: 0 | cwd: ~\n---\n--timeout 0');
    expect((await b.run('main', '/exec echo --timeout 0')).body).toBe('exit: 0 | cwd: ~\n---\n--timeout 0');
  });

  it('when the command outlives --timeout, then TIMEOUT with the output captured so far', async () => {
    const started = Date.now();
    const r = await b.run('main', '/exec --timeout 1 echo started; sleep 5; echo never');
    expect(Date.now() - started).toBeLessThan(4000);
    expect(r).toMatchObject({ ok: false, code: 'TIMEOUT' });
    expect(r.body).toBe('ERROR(TIMEOUT): timed out after 1 s; the command was interrupted\nexit: timeout | cwd: ~\n---\nstarted');
  });

  it('when the output is over 131072 bytes, then the first and last 65536 bytes frame the omitted count', async () => {
    const r = await b.run('main', "/exec head -c 65536 /dev/zero | tr '\\0' a; head -c 1000 /dev/zero | tr '\\0' m; head -c 65536 /dev/zero | tr '\\0' z");
    expect(r.ok).toBe(true);
    expect(r.body).toBe(`exit: 0 | cwd: ~\n---\n${'a'.repeat(65536)}\n… 1000 bytes omitted …\n${'z'.repeat(65536)}`);
  });

  it('when the output is over the cap by one byte, then exactly 1 byte is omitted', async () => {
    const r = await b.run('main', "/exec head -c 131073 /dev/zero | tr '\\0' q");
    expect(r.body).toBe(`exit: 0 | cwd: ~\n---\n${'q'.repeat(65536)}\n… 1 bytes omitted …\n${'q'.repeat(65536)}`);
  });

  it('when the output is exactly 131072 bytes, then nothing is omitted', async () => {
    const r = await b.run('main', "/exec head -c 131072 /dev/zero | tr '\\0' w");
    expect(r.body).toBe(`exit: 0 | cwd: ~\n---\n${'w'.repeat(131072)}`);
  });

  it('when lines cross the cut, then the omitted count is total minus 131072', async () => {
    const r = await b.run('main', '/exec seq 1 100000');
    const total = Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join('');
    const n = Buffer.byteLength(total) - 131072;
    const [head, tail] = r.body.split(`\n… ${n} bytes omitted …\n`);
    expect(tail).toBeDefined();
    expect(`${head}\n`.startsWith('exit: 0 | cwd: ~\n---\n1\n2\n')).toBe(true);
    expect(head.slice('exit: 0 | cwd: ~\n---\n'.length)).toBe(total.slice(0, 65536).replace(/\n+$/, ''));
    expect(tail).toBe(total.slice(-65536).replace(/\n+$/, ''));
  });
});
