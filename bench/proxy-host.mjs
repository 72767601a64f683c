// The egress proxy in a process of its own, as the daemon runs it apart from the agent's programs:
// `node bench/proxy-host.mjs <server port>`. Starts dist/effects/egressProxy.js with one agent,
// `bench`, allowed to 127.0.0.1:<server port>; prints `secret <s>` and then `listening <port>`.
import { join } from 'node:path';
import { root } from './common.mjs';

const { startEgressProxy } = await import(join(root, 'dist/effects/egressProxy.js'));
const serverPort = Number(process.argv[2]);
const proxy = await startEgressProxy({
  policyOf: (id) => (id === 'bench' ? { allow: [`127.0.0.1:${serverPort}`] } : undefined),
  protectedPorts: () => ({ daemon: 1 }),
  onDaemonRequest: (_id, _req, res) => { res.writeHead(404); res.end(); },
  onDenied: (d) => { process.stderr.write(`proxy-host: denied ${JSON.stringify(d)}\n`); },
});
process.stdout.write(`secret ${proxy.credential('bench')}\nlistening ${proxy.port}\n`);
process.once('SIGTERM', () => { proxy.close().then(() => process.exit(0), () => process.exit(1)); });
