// The baseline of bench/traces' replay figure: send commands to POST /exec one at a time over one
// keep-alive connection and read each answer, nothing else.
//   node bench/trace-bare-loop.mjs <port> <agent> <commands.json>
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

const [port, agentId, file] = process.argv.slice(2);
const cmds = JSON.parse(readFileSync(file, 'utf8'));
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function exec(cmd) {
  const body = JSON.stringify({ cmd, topic: 'main' });
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port: Number(port), path: '/exec', method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'X-Agent-Id': agentId, 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(body);
  });
}

for (const cmd of cmds) await exec(cmd);
agent.destroy();
