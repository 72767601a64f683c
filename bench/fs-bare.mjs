// The baseline of bench/fs: a bare node:http server that serves and stores files under <root> with no
// checks at all. GET: stat + stream. PUT: stream the body into the file (mode `inplace`, truncating it)
// or into a temp file that is then renamed over it (mode `atomic`, what Loom must do so a reader never
// sees half a file). Usage: node fs-bare.mjs <root> <port> [inplace|atomic]
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';

const [root, port, mode = 'inplace'] = process.argv.slice(2);
let seq = 0;
const server = createServer(async (req, res) => {
  const file = join(root, decodeURIComponent(req.url.split('?')[0]));
  try {
    if (req.method === 'GET') {
      const st = await stat(file);
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': st.size });
      createReadStream(file).pipe(res);
    } else if (req.method === 'PUT') {
      const target = mode === 'atomic' ? `${file}.${process.pid}.${seq++}.tmp` : file;
      req.pipe(createWriteStream(target)).on('finish', async () => {
        if (mode === 'atomic') await rename(target, file);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
      });
    } else {
      res.writeHead(405).end();
    }
  } catch {
    res.writeHead(404).end();
  }
});
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
