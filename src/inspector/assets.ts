import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The inspector page's files (behaviour.md §13.1, §13.5): shipped in the package under
 * `web/inspector/`, plus the graph-layout library (dagre) taken from node_modules as installed by
 * `npm ci`. No CDN, no network, no build step: the page works offline. Files are read once, at
 * the first request, into memory (a few hundred KiB), so serving one is a lookup in a fixed table and a
 * request path can never name a file outside it.
 */

/** One servable file. */
export interface Asset {
  body: Buffer;
  type: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** The package folder of the page: `<package>/web/inspector` (this file is `<package>/{src,dist}/inspector/assets.*`). */
export function pageFolder(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web', 'inspector');
}

/** The ESM build of @dagrejs/dagre (graph layout for the state diagrams), resolved like an import. */
function dagreFile(): string {
  const require = createRequire(import.meta.url);
  // The package exports only its entry points; its dist folder holds the self-contained ESM build.
  return join(dirname(require.resolve('@dagrejs/dagre')), 'dagre.esm.js');
}

/** Throws when the page or the graph-layout library is missing (a broken install): checked at start-up. */
export function checkAssets(folder = pageFolder()): void {
  for (const f of [join(folder, 'index.html'), dagreFile()]) {
    if (!existsSync(f)) throw new Error(`inspector: ${f} is missing (run npm ci)`);
  }
}

/** Every asset by its name under /inspect/assets/ (`app.js`, `vendor/dagre.js`), and the page itself. */
export function loadAssets(folder = pageFolder()): { page: Asset; assets: Map<string, Asset> } {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(folder)) {
    const type = TYPES[extname(name)];
    if (type && name !== 'index.html') assets.set(name, { body: readFileSync(join(folder, name)), type });
  }
  const dagre = dagreFile();
  if (!existsSync(dagre)) throw new Error(`inspector: ${dagre} is missing (run npm ci)`);
  assets.set('vendor/dagre.js', { body: readFileSync(dagre), type: TYPES['.js'] });
  return { page: { body: readFileSync(join(folder, 'index.html')), type: TYPES['.html'] }, assets };
}
