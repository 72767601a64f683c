// Baseline servers of bench/exec, each run in a process of its own (as the daemon is):
//   node exec-baselines.mjs bare <port> <content-file>      node:http alone, no framework: the floor of any
//        Node server (Loom is read as a share of it); reads the JSON body itself, same SSE bytes.
//   node exec-baselines.mjs lean <port> <content-file>      Express 5 alone: no body parser middleware, the
//        route reads and parses the JSON body itself and writes the same SSE bytes Loom writes for /help.
//   node exec-baselines.mjs skeleton <port> <content-file>  Express 5 + express.json() + one XState actor per
//        topic running each command as an invoked promise actor (the issue 2 skeleton), same bytes.
// <content-file> holds Loom's `content` string for `/help` so all servers answer byte-identical bodies.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import express from 'express';
import { createActor, fromPromise, setup } from 'xstate';

const [mode, port, contentFile] = process.argv.slice(2);
const content = readFileSync(contentFile, 'utf8');
const HEADERS = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' };
const ready = () => process.stdout.write('listening\n');

/** The three events Loom sends for `/help` (head, content, done) as one write. */
function answer(res, agentId, cmd, topic) {
  const head = { ok: true, code: null, cmd, request_id: null, agent_id: agentId, topic, topic_type: 'tab', meta: null };
  res.writeHead(200, HEADERS);
  res.end(`event: head\ndata: ${JSON.stringify(head)}\n\nevent: content\ndata: ${JSON.stringify(content)}\n\nevent: done\ndata: {}\n\n`);
}

/** Read the whole body, parse it as JSON and answer (bare and lean). */
function readAndAnswer(req, res) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const { cmd, topic } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    answer(res, req.headers['x-agent-id'], cmd, topic);
  });
}

/** Express 5 + express.json() + one XState actor per topic, each command an invoked promise actor. */
function skeleton(app) {
  const machine = setup({
    actors: { run: fromPromise(async ({ input }) => input.cmd) },
  }).createMachine({
    initial: 'idle',
    context: { job: null },
    states: {
      idle: { on: { go: { target: 'busy', actions: ({ context, event }) => { context.job = event.job; } } } },
      busy: {
        invoke: {
          src: 'run', input: ({ context }) => ({ cmd: context.job.cmd }),
          onDone: { target: 'idle', actions: ({ context }) => { context.job.done(); context.job = null; } },
        },
      },
    },
  });
  const actors = new Map();
  app.use(express.json());
  app.post('/exec', (req, res) => {
    const { cmd, topic } = req.body;
    let a = actors.get(topic);
    if (!a) { a = createActor(machine).start(); actors.set(topic, a); }
    a.send({ type: 'go', job: { cmd, done: () => answer(res, req.headers['x-agent-id'], cmd, topic) } });
  });
}

if (mode === 'bare') {
  createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/exec') readAndAnswer(req, res);
    else res.writeHead(404).end();
  }).listen(Number(port), '127.0.0.1', ready);
} else {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  if (mode === 'lean') app.post('/exec', readAndAnswer);
  else skeleton(app);
  app.listen(Number(port), '127.0.0.1', ready);
}
