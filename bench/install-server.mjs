// A loopback file server for bench/install: `node bench/install-server.mjs <port>`; prints `listening`.
// GET /f50.json  a manifest of 50 Markdown files of 8 KiB each (string.md + 49 pages) at /f50/<i>.md
// GET /one.json  a manifest of an 8 KiB string.md and one file of 4.5 MiB at /one/<i>.md
// GET /big.json   a manifest of an 8 KiB string.md and 11 files of 4.5 MiB (49.5 MiB in all) at /big/<i>.md
// File bodies are built once in memory, so the server costs the same for Loom and the bare script.
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const base = `http://127.0.0.1:${port}`;

/** `bytes` of Markdown text (a title, then lines of one repeated sentence). */
function page(title, bytes) {
  const head = `# ${title}\n\n`;
  const line = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\n';
  return Buffer.from(head + line.repeat(Math.ceil(bytes / line.length))).subarray(0, bytes);
}

const sets = new Map();
function set(name, count, bytes) {
  // string.md stays small (Loom reads the root document into memory to name the package).
  const files = Array.from({ length: count }, (_, i) => page(`${name} ${i}`, i === 0 ? Math.min(bytes, 8192) : bytes));
  const entries = files.map((_, i) => ({ path: i === 0 ? 'string.md' : `pages/p${i}.md`, url: `${base}/${name}/${i}.md` }));
  sets.set(name, { files, manifest: Buffer.from(JSON.stringify({ name: `bench-${name}`, files: entries })) });
}
set('f50', 50, 8 * 1024);
set('one', 2, 4.5 * 1024 * 1024);
set('big', 12, 4.5 * 1024 * 1024);

createServer((req, res) => {
  const m = /^\/(?:(\w+)\.json|(\w+)\/(\d+)\.md)$/.exec(req.url ?? '');
  const s = m && sets.get(m[1] ?? m[2]);
  const body = !s ? null : m[1] ? s.manifest : s.files[Number(m[3])];
  if (!body) { res.writeHead(404).end(); return; }
  res.writeHead(200, { 'Content-Type': m[1] ? 'application/json' : 'text/markdown; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
}).listen(port, '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => process.exit(0));
