// A loopback HTTP server for bench/proxy: `node bench/proxy-server.mjs`; prints `listening <port>`.
// GET /big answers 10 MiB from one buffer built at start (the server costs the same for every mode);
// anything else answers `ok`.
import { createServer } from 'node:http';

const BIG = Buffer.alloc(10 * 1024 * 1024, 'x');
const server = createServer((req, res) => {
  if (req.url === '/big') {
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': BIG.length });
    res.end(BIG);
    return;
  }
  res.writeHead(200, { 'Content-Length': 2 });
  res.end('ok');
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
process.once('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
