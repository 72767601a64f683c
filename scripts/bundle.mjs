#!/usr/bin/env node
// Second step of `npm run build` (after tsc): bundles the CLI and daemon, dist/cli/full.js, with its
// npm dependencies into a few files, written over tsc's dist/cli/full.js; then the `loom` entry,
// dist/cli/main.js, into one file of its own (see "The entry" below).
//
// Why: a cold start spent most of its time resolving and loading modules, not running them. tsc's
// output is 230 files and the dependencies add ~300 more (Express 5 alone: ~150 ms to import on
// this machine); the daemon reached its ready line in ~670 ms against ~130 ms for a bare `node -e`
// (bench/scale). Bundled, it starts in ~270 ms, and every `loom …` CLI call gains the same.
// esbuild (a well-kept bundler, already in the tree through tsx) does this; nothing here is
// hand-written module loading.
//
// What stays outside the bundle, and why:
//   node-pty, *.node                  native addons (loaded with createRequire at first use)
//   @modelcontextprotocol/sdk, zod,   loaded on first use only (docs/architecture.md "Resident memory";
//   turndown, gray-matter             test/blackbox/footprint.e2e.test.ts checks it)
//   bufferutil, utf-8-validate        optional speed-ups of ws that are not installed
//   iconv-lite                        its 500 KiB of code-page tables (a quarter of the bundle) would be
//                                     parsed at every start; raw-body (under Express's body-parser,
//                                     which Loom never calls) needs them only for a non-UTF-8 body
// Whitespace and comments are minified away (names are kept, so stack traces still read): a third
// less to parse, and an ASCII-only file. One non-ASCII character in a comment (a '§') makes V8 hold
// the whole source as UTF-16, which Node 20 then decodes at every start (bench/RESULTS.md).
// Code reached through `import()` goes to chunks beside full.js (splitting), so what loaded late
// before still loads late. Chunks sit in dist/cli/, the same depth as every tsc output file, so the
// paths the code builds from import.meta.url ('../../build/Release/…', '../../web/inspector',
// './main.js') mean the same in the bundle. The rest of dist/ stays as tsc wrote it (the parse
// worker, dist/effects/parseWorker.js, runs from there).
//
// The daemon has an entry of its own, dist/cli/daemonEntry.js (sharing chunks with full.js), so
// `loom daemon` reaches it without the command tree.
// The entry: `loom <topic> <command…>` runs once per tool call of an agent host, so main.ts serves it
// (and `--version`) alone, bundled into dist/cli/main.cjs: one CommonJS file with the options, the
// client and node:http, no commander and no chunk to resolve. CommonJS because running an ES module
// loads Node's ES module loader first (a few ms of every call on Node 20, decision 0021); bin/loom.js
// (CommonJS too: bin/package.json) requires it. `import('./daemonEntry.js')` for a plain
// `loom daemon` line and `import('./full.js')` for every other command load the ES bundles only
// then. dist/cli/main.js, the path `npm start`, the service unit and MCP configurations name, is a
// two-line ES module that requires main.cjs, so both ways in run the same file. Its few shared
// modules (common.ts, the client) are bundled twice, once there and once in full.js; both copies
// hold no state.
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'cli');
const CHUNK_PREFIX = 'bundle-';
const requireHere = createRequire(import.meta.url);

// Chunk names carry a content hash: remove the previous build's so they do not pile up. tsc's map of
// main.js would describe the file this build replaces.
for (const f of readdirSync(out)) if (f.startsWith(CHUNK_PREFIX) || f === 'main.js.map' || f === 'full.js.map' || f === 'daemonEntry.js.map' || f.startsWith('lazy-') || f === 'main.cjs') rmSync(join(out, f));

/**
 * `import … from 'node:http'` is bundled as `require('node:http')`. On Node 22 and 24 an ES import of
 * node:http builds the module's namespace, which reads every lazy export, and one of them loads
 * undici (fetch's HTTP stack): ~55 ms of every start on Node 24 here, against ~6 ms for require.
 * The bundled CommonJS packages already require it; this makes Loom's own imports do the same.
 */
const httpAsCommonJs = {
  name: 'node-http-as-commonjs',
  setup(b) {
    b.onResolve({ filter: /^(node:)?http$/ }, (a) => (a.kind === 'import-statement' || a.kind === 'dynamic-import' ? { path: 'node:http', namespace: 'node-http-cjs' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'node-http-cjs' }, () => ({ contents: "module.exports = require('node:http');", loader: 'js' }));
  },
};

/**
 * Node modules the entry loads on first use, not at start: node:os (the home folder comes from $HOME
 * when it is set, cli/common.ts homeDir, as os.homedir() itself reads it). Every import of one gets a
 * stand-in whose exports are getters that require the module when first read. Node's other modules
 * of the entry (fs, path) are loaded by Node's own start-up already, and node:http is needed.
 */
const LAZY_BUILTINS = ['node:os'];

/**
 * Node modules the daemon bundle (daemonEntry.js, full.js and their chunks) loads on first use: none
 * of them is needed to reach the ready line, and each costs its compile and run at every start (TLS,
 * crypto and zlib set up native bindings; child_process brings dgram and net's cluster checks, worker
 * threads their messaging). An importer that reads one at load (a top-level `promisify(execFile)`)
 * still loads it then, so test/blackbox/footprintStart.e2e.test.ts checks which are loaded before the
 * ready line. Both spellings (`node:zlib`, `zlib`) of a bundled package's require get the stand-in.
 * Every stand-in has the exports of the module of the Node that builds, so a build runs on the Node
 * line it was made with (.ci/run builds on each).
 */
const DAEMON_LAZY_BUILTINS = ['node:crypto', 'node:https', 'node:zlib', 'node:child_process', 'node:worker_threads', 'node:dns', 'node:perf_hooks', 'node:v8', 'node:vm', 'node:fs/promises', 'node:stream/promises', 'node:os', 'node:assert'];

/** Every import of one of `list` (either spelling) gets a stand-in that requires it at first read. */
const lazyBuiltins = (list) => ({
  name: 'lazy-builtins',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z0-9_/]+$/ }, (a) => {
      const path = a.path.startsWith('node:') ? a.path : `node:${a.path}`;
      return list.includes(path) && a.namespace !== 'lazy-builtin' ? { path, namespace: 'lazy-builtin' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (a) => ({ contents: getterModule(requireHere(a.path), JSON.stringify(a.path)), loader: 'js' }));
  },
});

/**
 * A CommonJS stand-in for `real` (a module's exports): each of its exports is a getter that requires
 * `<specifier>` at first read. When `real` is a function (express), the stand-in is one too, which
 * calls or constructs the real one.
 */
function getterModule(real, specifier) {
  const getters = Object.keys(real).filter((k) => k !== 'default').map((k) => `${JSON.stringify(k)}: { enumerable: true, get: () => load()[${JSON.stringify(k)}] }`).join(',\n');
  const callable = typeof real === 'function' ? 'module.exports = function (...args) { return new.target ? Reflect.construct(load(), args, new.target) : load().apply(this, args); };\n' : '';
  return `let real;\nconst load = () => (real ??= require(${specifier}));\n${callable}Object.defineProperties(module.exports, {\n${getters}\n});\n`;
}

/**
 * Packages the daemon needs only when a request does, not to reach its ready line: the MIME table
 * (mime-types and mime-db's 150 KiB of data, which Express's modules require at load and index at
 * once, but call only to name a response's type), the CommonMark parser (micromark and its entity
 * tables, for the first document opened), qs with its helpers (Express's extended query parser;
 * Loom keeps Express 5's simple one) and Express itself with the packages under it (its app is made
 * after the ready line, src/daemon.ts compose). Each is bundled into a CommonJS file of its own
 * beside the bundle (dist/cli/lazy-<name>.cjs), and every import of the package in the bundle gets a
 * stand-in whose exports are getters that require that file at first use: a start neither parses
 * nor runs them. Safe because every importer reads the exports when it calls them
 * (`mime.lookup(…)`, `fromMarkdown(…)`, `qs.parse(…)`, `express()`), never at load.
 */
const LAZY_PACKAGES = [
  { name: 'mime-types', file: 'lazy-mime-types.cjs' },
  { name: 'mdast-util-from-markdown', file: 'lazy-markdown.cjs' },
  { name: 'qs', file: 'lazy-qs.cjs' },
  // The request log's formatter (effects/requestLogFile.ts makes its logger at the first line): with it
  // go thread-stream and its worker_threads, which Loom never starts.
  { name: 'pino', file: 'lazy-pino.cjs' },
  // Last: it requires mime-types and qs, which keep their own files (and stand-ins) inside it.
  { name: 'express', file: 'lazy-express.cjs' },
];

async function buildLazyPackages() {
  for (const p of LAZY_PACKAGES) {
    await build({
      stdin: { contents: `module.exports = require(${JSON.stringify(p.name)});`, resolveDir: root, loader: 'js' },
      outfile: join(out, p.file), bundle: true, format: 'cjs', platform: 'node', target: 'node20', minifyWhitespace: true, logLevel: 'warning',
      external: ['iconv-lite'], plugins: [lazyPackages(p.name)],
    });
  }
}

/** Every import of a LAZY_PACKAGES package (but `building`, the one being bundled) gets its stand-in. */
const lazyPackages = (building) => ({
  name: 'lazy-packages',
  setup(b) {
    const byName = new Map(LAZY_PACKAGES.filter((p) => p.name !== building).map((p) => [p.name, p]));
    b.onResolve({ filter: /^[a-z@][^/]*$/ }, (a) => (byName.has(a.path) && a.namespace !== 'lazy-package' ? { path: a.path, namespace: 'lazy-package' } : undefined));
    b.onResolve({ filter: /^\.\/lazy-.*\.cjs$/, namespace: 'lazy-package' }, (a) => ({ path: a.path, external: true }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-package' }, (a) => {
      const p = byName.get(a.path);
      return { contents: getterModule(requireHere(join(out, p.file)), JSON.stringify('./' + p.file)), loader: 'js' };
    });
  },
});

/** The entry's imports of the command tree and of the daemon stay imports of the files beside it. */
const fullStaysOutside = {
  name: 'full-stays-outside',
  setup(b) {
    b.onResolve({ filter: /^\.\/(full|daemonEntry)\.js$/ }, (a) => ({ path: a.path, external: true }));
  },
};

const common = {
  outdir: out,
  allowOverwrite: true,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['node-pty', '*.node', '@modelcontextprotocol/sdk', 'zod', 'turndown', 'gray-matter', 'bufferutil', 'utf-8-validate', 'iconv-lite'],
  minifyWhitespace: true,
  // The bundled CommonJS packages (Express, pino, …) call require() for Node's own modules; an ES
  // module has no require, so each output file gets one made for it.
  banner: { js: "import { createRequire as __loomCreateRequire } from 'node:module'; const require = __loomCreateRequire(import.meta.url);" },
  logLevel: 'warning',
};

/**
 * node-pty's JavaScript, bundled into dist/node-pty.cjs (behaviour.md §17). node-pty is an optional
 * dependency that npm removes where its binding cannot be compiled, and with it the code that drives
 * Loom's prebuilt binding; the bundled copy stays. Its own loader looks for the binding in
 * `../build/Release` and then `../prebuilds/<platform>-<arch>/pty.node` beside the file that
 * requires it: from dist/, those are the package's prebuilt parts (effects/nativeParts.ts loads it;
 * test/package/prebuilds.e2e.test.ts checks which binding it took). Skipped, with a line, where the
 * checkout has no node-pty (its install failed): that checkout's shells run on pipes.
 */
async function buildNodePty() {
  const ptyDir = join(root, 'node_modules', 'node-pty');
  const outfile = join(root, 'dist', 'node-pty.cjs');
  rmSync(outfile, { force: true });
  if (!existsSync(join(ptyDir, 'lib', 'index.js'))) {
    console.warn('bundle: node_modules/node-pty is missing (its install failed); dist/node-pty.cjs not made, bash topics will run on pipes');
    return;
  }
  const { version, license } = JSON.parse(readFileSync(join(ptyDir, 'package.json'), 'utf8'));
  await build({
    entryPoints: [join(ptyDir, 'lib', 'index.js')], outfile, bundle: true, format: 'cjs', platform: 'node', target: 'node20',
    minifyWhitespace: true, logLevel: 'warning', logOverride: { 'unsupported-require-call': 'silent' },
    banner: { js: `/* node-pty ${version} (${license} licence, Copyright (c) 2012-2015 Christopher Jeffrey, 2016 Daniel Imms, 2018 Microsoft Corporation), bundled by Loom's scripts/bundle.mjs */` },
  });
}

await buildNodePty();
await buildLazyPackages();
await build({ ...common, entryPoints: [join(out, 'full.js'), join(out, 'daemonEntry.js')], splitting: true, chunkNames: `${CHUNK_PREFIX}[name]-[hash]`, plugins: [httpAsCommonJs, lazyPackages(), lazyBuiltins(DAEMON_LAZY_BUILTINS)] });
// The entry, as CommonJS (no banner: CommonJS has require). main.js, tsc's output it is built from,
// is then replaced by the ES module that runs it.
await build({ ...common, banner: undefined, format: 'cjs', entryPoints: [join(out, 'main.js')], outdir: undefined, outfile: join(out, 'main.cjs'), plugins: [lazyBuiltins(LAZY_BUILTINS), fullStaysOutside] });
writeFileSync(join(out, 'main.js'), [
  '#!/usr/bin/env node',
  "// The `loom` entry as an ES module path (npm start, the service unit, MCP configurations): runs main.cjs (scripts/bundle.mjs).",
  "import { createRequire } from 'node:module';",
  "createRequire(import.meta.url)('./main.cjs');",
  '',
].join('\n'));
