// The baseline of bench/install: fetch a manifest and its files with plain Node (fetch, 4 at a time
// as Loom does) and stream each file to disk under `dir`. No validation, staging, registry or
// rename: the floor any installer pays. Usable alone: `node bench/install-bare.mjs <manifest-url> <dir>`.
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';

/** Fetch `manifestUrl` and write its files under `dir`; resolves with the number of bytes written. */
export async function bareInstall(manifestUrl, dir, parallel = 4) {
  const manifest = await (await fetch(manifestUrl)).json();
  const queue = [...manifest.files];
  let bytes = 0;
  const lane = async () => {
    for (let f = queue.shift(); f; f = queue.shift()) {
      const res = await fetch(f.url);
      if (!res.ok) throw new Error(`${f.url}: HTTP ${res.status}`);
      const target = join(dir, f.path);
      mkdirSync(dirname(target), { recursive: true });
      const out = createWriteStream(target);
      await pipeline(Readable.fromWeb(res.body), out);
      bytes += out.bytesWritten;
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return bytes;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [url, dir] = process.argv.slice(2);
  console.log(`${await bareInstall(url, dir)} bytes`);
}
