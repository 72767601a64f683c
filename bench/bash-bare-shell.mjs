// The bare persistent-shell protocol of behaviour.md §8.3 shared by bench/bash's two baselines
// (bash-bare.mjs in one process, bash-bare-http.mjs behind node:http): a node-pty bash, the
// command in a private temp file kept open and rewritten with ftruncate + pwrite (as the daemon
// does: no flush on close), sourced with stdin /dev/null, a fresh sentinel per command carrying
// status and cwd. Nothing else: no queue, no cleaning, no session.
import { randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const pty = createRequire(import.meta.url)('node-pty');
const sentinel = (hex) => `__loom_rc=$?; \\builtin printf '\\n%s%s|%d|%s\\n' '__LOOM_DONE_' '${hex}__' "$__loom_rc" "$PWD"`;

/** Start bash on a PTY; resolves once it answered its set-up line. `run(cmd)` resolves with the output bytes. */
export async function openBareShell() {
  const dir = mkdtempSync(join(tmpdir(), 'loom-bare-'));
  const script = join(dir, 'command.sh');
  const fd = openSync(script, 'w', 0o600);
  const env = { ...process.env, TERM: 'dumb', PS1: '', PS2: '', PROMPT_COMMAND: '', HISTFILE: '/dev/null' };
  const p = pty.spawn('/bin/bash', ['--noprofile', '--norc'], { name: 'dumb', cols: 200, rows: 50, cwd: dir, env, encoding: null });
  let buf = Buffer.alloc(0);
  let wanted = null;
  p.onData((d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    if (!wanted) return;
    const at = buf.indexOf(wanted.tag);
    if (at < 0) return;
    const nl = buf.indexOf(10, at + wanted.tag.length);
    if (nl < 0) return;
    const done = wanted.done;
    const out = buf.subarray(0, at);
    buf = Buffer.alloc(0);
    wanted = null;
    done(out);
  });
  const send = (line, hex) => new Promise((done) => {
    wanted = { tag: Buffer.from(`\n__LOOM_DONE_${hex}__|`), done };
    p.write(line);
  });
  const hex0 = randomBytes(8).toString('hex');
  await send(`stty -echo -onlcr 2>/dev/null; set +o history +o emacs +o vi +m; ${sentinel(hex0)}\n`, hex0);
  return {
    run(cmd) {
      const hex = randomBytes(8).toString('hex');
      ftruncateSync(fd, 0);
      writeSync(fd, cmd, 0);
      return send(`. '${script}' </dev/null; ${sentinel(hex)}\n`, hex);
    },
    close() {
      p.kill('SIGHUP');
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
