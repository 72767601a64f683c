// The ceiling of bench/bash for any daemon that answers over HTTP: the bare loop of bench/bash-bare.mjs
// (node-pty, the same sentinel protocol) behind a minimal node:http server, one POST = one command,
// answered with one SSE-shaped body (head, content, done) and nothing else: no parsing beyond
// JSON.parse, no queue machine, no session. Requests are run one at a time in arrival order.
// Usage: node bench/bash-bare-http.mjs; prints `listening <port>`.
import { randomBytes } from 'node:crypto';
import { ftruncateSync, mkdtempSync, openSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const pty = createRequire(import.meta.url)('node-pty');
const dir = mkdtempSync(join(tmpdir(), 'loom-bare-http-'));
const script = join(dir, 'command.sh');
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
const send = (line, hex) => new Promise((done) => {
  wanted = { tag: Buffer.from(`\n__LOOM_DONE_${hex}__|`), done };
  p.write(line);
});

const hex0 = randomBytes(8).toString('hex');
await send(`stty -echo -onlcr 2>/dev/null; set +o history +o emacs +o vi +m; ${sentinel(hex0)}\n`, hex0);

let chain = Promise.resolve();
createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    chain = chain.then(async () => {
      const cmd = String(JSON.parse(body).cmd).replace(/^\/exec /, '');
      const hex = randomBytes(8).toString('hex');
      ftruncateSync(fd, 0);
      writeSync(fd, cmd, 0);
      const out = await send(`. '${script}' </dev/null; ${sentinel(hex)}\n`, hex);
      const content = `exit: 0 | cwd: ~\n---\n${out.toString()}`;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.end(`event: head\ndata: {"ok":true}\n\nevent: content\ndata: ${JSON.stringify(content)}\n\nevent: done\ndata: {}\n\n`);
    });
  });
}).listen(0, '127.0.0.1', function () { console.log(`listening ${this.address().port}`); });
