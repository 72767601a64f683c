// The baseline of bench/install: fetch a manifest and its files with plain Node (node:http on a
// keep-alive agent, 4 at a time as Loom does) and stream each file to disk under `dir`. No
// validation, staging, registry or rename: the floor any installer pays. (Node's global fetch was
// tried first: under load it took 2-3x as long as node:http, which would flatter Loom.)
// Usable alone: `node bench/install-bare.mjs <manifest-url> <dir>`.
import { createWriteStream, mkdirSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** GET `url`; resolves with the response (rejects on a non-200 status). */
function open(url) {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      if (res.statusCode !== 200) { res.resume(); reject(new Error(`${url}: HTTP ${res.statusCode}`)); } else resolve(res);
    }).on('error', reject);
  });
}

/** Fetch `manifestUrl` and write its files under `dir`; resolves with the number of bytes written. */
export async function bareInstall(manifestUrl, dir, parallel = 4) {
  const chunks = [];
  for await (const c of await open(manifestUrl)) chunks.push(c);
  const manifest = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const queue = [...manifest.files];
  let bytes = 0;
  const lane = async () => {
    for (let f = queue.shift(); f; f = queue.shift()) {
      const res = await open(f.url);
      const target = join(dir, f.path);
      mkdirSync(dirname(target), { recursive: true });
      const out = createWriteStream(target);
      await pipeline(res, out);
      bytes += out.bytesWritten;
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return bytes;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [url, dir] = process.argv.slice(2);
  console.log(`${await bareInstall(url, dir)} bytes`);
  agent.destroy();
}
