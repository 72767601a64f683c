// As bench/cli-bare.mjs, as a CommonJS file (no ES module loader: what bin/loom.js runs as). The floor of a CLI call that does what `loom --agent <id> <topic> <cmd>` does on the wire: one POST /exec
// through node:http, the SSE answer read and its content printed. No option parsing, no error handling.
//   node bench/cli-bare.cjs <port> <agent> <topic> <cmd>
const { request } = require('node:http');

const [port, agent, topic, cmd] = process.argv.slice(2);
const body = JSON.stringify({ cmd, topic });
const req = request({ host: '127.0.0.1', port: Number(port), method: 'POST', path: '/exec',
  headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Accept: 'text/event-stream', 'X-Agent-Id': agent } }, (res) => {
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (c) => { text += c; });
  res.on('end', () => {
    const content = /event: content\ndata: (.*)\n/.exec(text);
    const c = content ? JSON.parse(content[1]) : text;
    // Without its `re:` line, as loom prints it.
    process.stdout.write(`${c.slice(c.indexOf('\n') + 1)}\n`);
  });
});
req.end(body);
