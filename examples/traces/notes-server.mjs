#!/usr/bin/env node
/**
 * The loopback API that document-actions.jsonl talks to (examples/README.md): a tiny notes service,
 * in memory, on 127.0.0.1:$NOTES_PORT (0 or unset: a free port). It prints `notes API listening on
 * http://127.0.0.1:<port>` once ready. POST /notes wants `Authorization: Bearer $NOTE_TOKEN`
 * (default demo-token).
 *
 *   GET  /notes[?q=text]   {"notes": [{"id", "text", "created_at"}]}, newest first
 *   POST /notes            {"text": "..."} → 201 the note; 401 without the token
 *   GET  /notes/<id>       the note, or 404 {"error": "no note <id>"}
 */
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

/** Start the API; resolves with its port and a close function. */
export function startNotesServer(port = 0, token = 'demo-token') {
  const notes = [];
  const send = (res, status, body) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const url = new URL(req.url, 'http://127.0.0.1');
      const one = /^\/notes\/(\d+)$/.exec(url.pathname);
      if (req.method === 'GET' && url.pathname === '/notes') {
        const q = url.searchParams.get('q') ?? '';
        return send(res, 200, { notes: notes.filter((n) => n.text.includes(q)).slice().reverse() });
      }
      if (req.method === 'POST' && url.pathname === '/notes') {
        if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'token required' });
        let text;
        try { text = JSON.parse(body).text; } catch { text = undefined; }
        if (typeof text !== 'string' || text === '') return send(res, 400, { error: 'text required' });
        const note = { id: notes.length + 1, text, created_at: new Date().toISOString() };
        notes.push(note);
        return send(res, 201, note);
      }
      if (req.method === 'GET' && one) {
        const note = notes.find((n) => n.id === Number(one[1]));
        return note ? send(res, 200, note) : send(res, 404, { error: `no note ${one[1]}` });
      }
      return send(res, 404, { error: 'not found' });
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ port: server.address().port, close: () => new Promise((r) => server.close(r)) }));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { port } = await startNotesServer(Number(process.env.NOTES_PORT ?? 0), process.env.NOTE_TOKEN ?? 'demo-token');
  process.stdout.write(`notes API listening on http://127.0.0.1:${port}\n`);
}
