// Baseline for bench/exec (issue 2): a bare Express 5 app with one XState actor per topic that
// answers POST /exec with the same three SSE events. It does the minimum Loom's path must do:
// parse JSON, find the topic's actor, run one command through it, write head/content/done.
import express from 'express';
import { createActor, fromPromise, setup } from 'xstate';

const machine = setup({
  actors: { run: fromPromise(async ({ input }) => `re: ${input.cmd}\nLoom commands\n---\n...`) },
}).createMachine({
  initial: 'idle',
  context: { job: null },
  states: {
    idle: { on: { go: { target: 'busy', actions: ({ context, event }) => { context.job = event.job; } } } },
    busy: {
      invoke: {
        src: 'run', input: ({ context }) => ({ cmd: context.job.cmd }),
        onDone: { target: 'idle', actions: ({ context, event }) => { context.job.done(event.output); context.job = null; } },
      },
    },
  },
});

export function startSkeleton(port) {
  const app = express();
  app.use(express.json());
  const actors = new Map();
  app.post('/exec', (req, res) => {
    const { cmd, topic } = req.body;
    let a = actors.get(topic);
    if (!a) { a = createActor(machine).start(); actors.set(topic, a); }
    a.send({ type: 'go', job: { cmd, done: (content) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
      res.write(`event: head\ndata: ${JSON.stringify({ ok: true, code: null, cmd, topic })}\n\n`);
      res.write(`event: content\ndata: ${JSON.stringify(content)}\n\n`);
      res.end('event: done\ndata: {}\n\n');
    } } });
  });
  return new Promise((resolve) => { const s = app.listen(port, '127.0.0.1', () => resolve(s)); });
}
