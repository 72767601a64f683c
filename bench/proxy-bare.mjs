// The floor for bench/proxy: the least a Node proxy in a process of its own can do, with no
// credential and no policy: CONNECT as a socket pipe, absolute-form through node:http. What the
// egress proxy costs beyond this row is its own work; what this row costs over direct is the extra
// hop. `node bench/proxy-bare.mjs`; prints `listening <port>`.
import { createServer, request } from 'node:http';
import { connect } from 'node:net';

const server = createServer({ noDelay: true }, (req, res) => {
  const url = new URL(req.url);
  const up = request({ host: url.hostname, port: url.port, path: url.pathname, method: req.method, headers: req.rawHeaders }, (ur) => {
    res.writeHead(ur.statusCode, ur.rawHeaders);
    ur.pipe(res);
  });
  up.on('error', () => res.destroy());
  req.pipe(up);
});
server.on('connect', (req, client) => {
  const at = req.url.lastIndexOf(':');
  const up = connect({ host: req.url.slice(0, at), port: Number(req.url.slice(at + 1)) }, () => {
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    up.pipe(client);
    client.pipe(up);
  });
  up.setNoDelay(true);
  client.setNoDelay(true);
  up.on('error', () => client.destroy());
  client.on('error', () => up.destroy());
  client.on('close', () => up.destroy());
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
process.once('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
