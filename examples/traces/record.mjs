#!/usr/bin/env node
/**
 * Records the golden traces of examples/traces/ again (examples/README.md): starts the built daemon
 * (`npm run build` first) with a temp data folder and the notes API, runs each scenario through the
 * wire (/exec, /mcp, webhooks) while a trace records it, and writes <name>.jsonl here.
 *
 *   node examples/traces/record.mjs [name…]     (default: all)
 *
 * Usually `loom replay <file> --update` is all a changed answer needs; re-record when a scenario changes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNotesServer } from './notes-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', '..', 'dist', 'cli', 'main.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

async function startDaemon() {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'loom-record-'));
  const proc = spawn(process.execPath, [cli, 'daemon'], { env: { ...process.env, SVC_PORT: String(port), SVC_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (c) => { out += c; if (out.includes('listening')) resolve(); });
    proc.once('exit', (c) => reject(new Error(`daemon exited ${c}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  return { base, stop: async () => { await fetch(`${base}/shutdown`, { method: 'POST' }); await new Promise((r) => proc.once('exit', r)); rmSync(dataDir, { recursive: true, force: true }); } };
}

/** The wire, as one agent sees it. */
function wire(base, agent) {
  const post = (path, body, headers = {}) => fetch(base + path, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Agent-Id': agent, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return {
    exec: async (topic, cmd, requestId) => (await post('/exec', { topic, cmd, ...(requestId ? { request_id: requestId } : {}) })).text(),
    mcp: async (topic, cmd) => (await post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'loom', arguments: { topic, cmd } } }, { Accept: 'application/json, text/event-stream' })).json(),
    webhook: async (text) => {
      const { webhook_url: url } = await (await fetch(`${base}/agents/${agent}/webhook`)).json();
      return (await fetch(url, { method: 'POST', body: text })).status;
    },
  };
}

/** The scenarios: each gets a fresh agent and a trace of that agent; `replay` is how to run it again. */
const scenarios = {
  'document-actions': {
    replay: 'loom replay examples/traces/document-actions.jsonl --set NOTES_PORT=<port> --set NOTE_TOKEN=demo-token (with: NOTES_PORT=<port> node examples/traces/notes-server.mjs)',
    async setup({ home }) {
      mkdirSync(join(home, 'apps'), { recursive: true });
      writeFileSync(join(home, 'apps', 'notes.md'), readFileSync(join(here, 'notes.md'), 'utf8'));
      writeFileSync(join(home, 'todo.txt'), 'milk\neggs\nbread\n');
    },
    async run(w, { notesPort }) {
      await w.exec('main', `/set $NOTES_PORT = "${notesPort}"`, 'r1');
      await w.exec('main', '/set $NOTE_TOKEN = "demo-token"', 'r2');
      await w.exec('main', '/open ~/apps/notes.md', 'r3');
      await w.exec('main', '/act', 'r4');
      await w.exec('main', '/act.add "buy milk"', 'r5');
      await w.exec('main', '/act.add "call the plumber"', 'r6');
      await w.exec('main', '/act.list', 'r7');
      await w.exec('main', '/act.read @note-2', 'r8');
      await w.exec('main', '/act.list --q plumber', 'r9');
      await w.exec('main', '/act.read 99', 'r10');
      await w.exec('main', '/act.count ~/todo.txt', 'r11');
    },
  },
  variables: {
    replay: 'loom replay examples/traces/variables.jsonl --set UNITS=metric --set APP_LANG=ko --set CITY=Busan',
    async run(w) {
      await w.exec('main', '/set {city} = "Seoul"\n{note} = \'two words\'', 'r1');
      await w.exec('main', '/set $UNITS = "metric"', 'r2');
      await w.exec('app:weather', '/set $APP_LANG = "ko"', 'r3');
      await w.exec('app:weather:seoul', '/set $CITY = "Busan"', 'r4');
      await w.exec('main', '/set', 'r5');
      await w.exec('app:weather:seoul', '/set', 'r6');
      await w.exec('app:weather', '/set', 'r7');
      await w.exec('notes', '/set', 'r8');
      await w.exec('main', '/unset {city} $UNITS', 'r9');
      await w.exec('main', '/unset $UNITS', 'r10');
      await w.exec('main', '/set', 'r11');
    },
  },
  'event-inbox': {
    replay: 'loom replay examples/traces/event-inbox.jsonl',
    async run(w) {
      await w.exec('main', '/events', 'r1');
      await w.exec('main', '/webhook', 'r2');
      await w.webhook('deploy done');
      await w.webhook('build #42 failed\nsee the logs for details');
      const list = await w.exec('main', '/events', 'r3');
      const ids = [...list.matchAll(/evt_[0-9A-Z]{26}/g)].map((m) => m[0]);
      await w.exec('main', `/events.read ${ids[1]}`, 'r4');
      await w.exec('main', `/events.ack ${ids[1]}`, 'r5');
      await w.exec('event', '/events --all', 'r6');
      await w.exec('main', '/events.clear', 'r7');
      await w.exec('main', '/events.ack --all', 'r8');
      await w.exec('main', '/events.clear --all', 'r9');
      await w.exec('main', '/events --all', 'r10');
    },
  },
  'queue-429': {
    replay: 'loom replay examples/traces/queue-429.jsonl --speed 1',
    async run(w) {
      // One long command, five that wait (the queue's limit), two refused with 429 QUEUE_FULL.
      const all = [w.exec('main', '/exec sleep 2; echo first', 'r1')];
      for (let i = 2; i <= 8; i++) {
        await sleep(150);
        all.push(w.exec('main', `/exec echo ${i}`, `r${i}`));
      }
      await Promise.all(all);
      await w.exec('main', '/topics', 'r9');
    },
  },
  'mcp-busy': {
    replay: 'loom replay examples/traces/mcp-busy.jsonl --speed 1',
    // The daemon loads its MCP server on the first /mcp request (a second or so here): loaded before the trace.
    setup: ({ base }) => fetch(`${base}/mcp`, { method: 'POST', headers: { Accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) }),
    async run(w) {
      // MCP never queues: while /exec runs on main, an MCP call there is BUSY; another topic answers.
      const slow = w.exec('main', '/exec sleep 2; echo done', 'r1');
      await sleep(400);
      await w.mcp('main', '/info');
      await w.mcp('notes', '/info');
      await slow;
      await w.mcp('main', '/exec echo free again');
    },
  },
};

const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(scenarios);
const daemon = await startDaemon();
const notes = await startNotesServer(0);
try {
  for (const name of wanted) {
    const s = scenarios[name];
    if (!s) throw new Error(`unknown scenario ${name} (have: ${Object.keys(scenarios).join(', ')})`);
    const agent = 'leo';
    await fetch(`${daemon.base}/agents/${agent}`, { method: 'DELETE' });
    const { home } = await (await fetch(`${daemon.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: agent }) })).json();
    await s.setup?.({ home, base: daemon.base });
    const { trace_id: id } = await (await fetch(`${daemon.base}/traces`, { method: 'POST', body: JSON.stringify({ agent_id: agent, note: `replay: ${s.replay}` }) })).json();
    await s.run(wire(daemon.base, agent), { notesPort: notes.port });
    await fetch(`${daemon.base}/traces/${id}`, { method: 'DELETE' });
    const text = await (await fetch(`${daemon.base}/traces/${id}`)).text();
    writeFileSync(join(here, `${name}.jsonl`), text);
    console.log(`wrote examples/traces/${name}.jsonl (${text.trim().split('\n').length - 1} steps)`);
  }
} finally {
  await notes.close();
  await daemon.stop();
}
