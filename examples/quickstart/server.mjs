#!/usr/bin/env node
/**
 * The quickstart's demo API (README "Quickstart"): a tiny notes service on 127.0.0.1 that the app
 * document notes.md calls. In memory only; stops with Ctrl-C (or `kill %1` when started with `&`).
 *
 *   NOTES_PORT   port to listen on (default 3930)
 *   NOTE_TOKEN   the bearer token POST /notes asks for (default "demo-token")
 *
 * GET  /notes[?q=text]   {"notes": [{"id", "text", "created_at"}]}, newest first
 * POST /notes            {"text": "..."} with "Authorization: Bearer <token>" → 201 the note
 * GET  /notes/<id>       the note, or 404
 * GET  /notes.md, /manifest.json   the app document and an install manifest pointing at it
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const port = Number(process.env.NOTES_PORT ?? 3930);
const token = process.env.NOTE_TOKEN ?? 'demo-token';
const here = new URL('.', import.meta.url);
const notes = [];

function send(res, status, body, type = 'application/json') {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function readJson(req) {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (c) => { text += c; });
    req.on('end', () => {
      try { resolve(JSON.parse(text)); } catch { resolve(null); }
    });
  });
}

/** The install manifest, with this server's real port in its file URLs. */
function manifest() {
  const text = readFileSync(new URL('manifest.json', here), 'utf8');
  return text.replaceAll('http://127.0.0.1:3930/', `http://127.0.0.1:${port}/`);
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
  if (req.method === 'GET' && url.pathname === '/notes') {
    const q = (url.searchParams.get('q') ?? '').toLowerCase();
    return send(res, 200, { notes: notes.filter((n) => n.text.toLowerCase().includes(q)).reverse() });
  }
  if (req.method === 'POST' && url.pathname === '/notes') {
    if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'missing or wrong bearer token' });
    const body = await readJson(req);
    if (typeof body?.text !== 'string' || body.text.trim() === '') return send(res, 400, { error: 'text required' });
    const note = { id: notes.length + 1, text: body.text, created_at: new Date().toISOString() };
    notes.push(note);
    return send(res, 201, note);
  }
  const one = /^\/notes\/(\d+)$/.exec(url.pathname);
  if (req.method === 'GET' && one) {
    const note = notes.find((n) => n.id === Number(one[1]));
    return note ? send(res, 200, note) : send(res, 404, { error: `no note ${one[1]}` });
  }
  if (req.method === 'GET' && url.pathname === '/notes.md') return send(res, 200, readFileSync(new URL('notes.md', here), 'utf8'), 'text/markdown; charset=utf-8');
  if (req.method === 'GET' && url.pathname === '/manifest.json') return send(res, 200, manifest());
  return send(res, 404, { error: `not found: ${req.method} ${url.pathname}` });
});

server.listen(port, '127.0.0.1', () => {
  console.log(`quickstart notes API on http://127.0.0.1:${port} (token: ${token})`);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.close(() => process.exit(0)));
