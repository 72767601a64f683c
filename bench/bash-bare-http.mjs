// The ceiling of bench/bash for any daemon that answers over HTTP: the bare loop of bench/bash-bare.mjs
// (bench/bash-bare-shell.mjs) behind a minimal node:http server, one POST = one command, answered with
// one SSE-shaped body (head, content, done) and nothing else: no parsing beyond JSON.parse, no queue
// machine, no session. Requests run one at a time in arrival order.
// Usage: node bench/bash-bare-http.mjs; prints `listening <port>`.
import { createServer } from 'node:http';
import { openBareShell } from './bash-bare-shell.mjs';

const shell = await openBareShell();
let chain = Promise.resolve();
createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    chain = chain.then(async () => {
      const out = await shell.run(String(JSON.parse(body).cmd).replace(/^\/exec /, ''));
      const content = `exit: 0 | cwd: ~\n---\n${out.toString()}`;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.end(`event: head\ndata: {"ok":true}\n\nevent: content\ndata: ${JSON.stringify(content)}\n\nevent: done\ndata: {}\n\n`);
    });
  });
}).listen(0, '127.0.0.1', function () { console.log(`listening ${this.address().port}`); });
