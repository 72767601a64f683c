// The baseline of bench/fs: a bare node:http server that serves and stores files under <root>
// (GET streams the file, PUT streams the body to it), no checks at all. Usage: node fs-bare.mjs <root> <port>
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';

const [root, port] = process.argv.slice(2);
const server = createServer(async (req, res) => {
  const file = join(root, decodeURIComponent(req.url.split('?')[0]));
  try {
    if (req.method === 'GET') {
      const st = await stat(file);
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': st.size });
      createReadStream(file).pipe(res);
    } else if (req.method === 'PUT') {
      req.pipe(createWriteStream(file)).on('finish', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}'));
    } else {
      res.writeHead(405).end();
    }
  } catch {
    res.writeHead(404).end();
  }
});
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
