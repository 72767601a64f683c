// Baseline of bench/bash: a bare node-pty loop in one process running the persistent-shell protocol of
// behaviour.md §8.3 (script in a private temp file, sourced with stdin /dev/null, a fresh sentinel per
// command carrying status and cwd), nothing else. Usage: node bench/bash-bare.mjs <seconds>
// Prints one JSON line: {"n": <commands>, "ms": <elapsed>}.
import { randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const pty = createRequire(import.meta.url)('node-pty');
const seconds = Number(process.argv[2] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'loom-bare-'));
const script = join(dir, 'command.sh');
// As the daemon does: the script file stays open, rewritten with ftruncate + pwrite (no flush on close).
const fd = openSync(script, 'w', 0o600);
const env = { ...process.env, TERM: 'dumb', PS1: '', PS2: '', PROMPT_COMMAND: '', HISTFILE: '/dev/null' };
const p = pty.spawn('/bin/bash', ['--noprofile', '--norc'], { name: 'dumb', cols: 200, rows: 50, cwd: dir, env, encoding: null });
const sentinel = (hex) => `__loom_rc=$?; \\builtin printf '\\n%s%s|%d|%s\\n' '__LOOM_DONE_' '${hex}__' "$__loom_rc" "$PWD"`;

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

function send(line, hex) {
  return new Promise((done) => {
    wanted = { tag: Buffer.from(`\n__LOOM_DONE_${hex}__|`), done };
    p.write(line);
  });
}

const hex0 = randomBytes(8).toString('hex');
await send(`stty -echo -onlcr 2>/dev/null; set +o history +o emacs +o vi +m; ${sentinel(hex0)}\n`, hex0);
let n = 0;
const start = performance.now();
const end = start + seconds * 1000;
while (performance.now() < end) {
  const hex = randomBytes(8).toString('hex');
  ftruncateSync(fd, 0);
  writeSync(fd, 'echo hi', 0);
  const out = await send(`. '${script}' </dev/null; ${sentinel(hex)}\n`, hex);
  if (out.toString() !== 'hi\n') throw new Error(`unexpected output ${JSON.stringify(out.toString())}`);
  n++;
}
const ms = performance.now() - start;
p.kill('SIGHUP');
closeSync(fd);
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ n, ms }));
process.exit(0);
