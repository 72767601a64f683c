#!/usr/bin/env node
// `npm run prebuilds`: makes the prebuilt native parts the package carries (behaviour.md §17,
// docs/packaging.md "Prebuilt native parts"): Loom's loom_spawn and loom_fd addons, the loom_sandbox
// executable, and node-pty's binding (pty.node), for linux-x64 and linux-arm64 (glibc), into
// prebuilds/<platform>-<arch>/, with prebuilds/manifest.json naming the sources they were made from.
// (Not `prebuild`: npm would run a script of that name before every `npm run build`.)
// Re-run it after any change to binding.gyp or native/ (test/package/prebuilds.test.ts fails until then)
// and after a change of node-pty's version, and commit prebuilds/.
//
// Why not prebuildify: it copies the first .node file of a build and nothing else, and Loom's one
// binding.gyp makes two addons and an executable (node-gyp-build's loader likewise takes the first
// .node file in build/Release). This script drives node-gyp itself, the same tool, once per target.
//
// The addons use N-API (NAPI_VERSION 8), so one binary per architecture serves every Node line.
// Each target is built in a temporary copy of the sources, so the checkout's own build/ is left alone.
// arm64 is cross-compiled with Debian's g++-aarch64-linux-gnu (`apt-get install g++-aarch64-linux-gnu`).
//
//   npm run prebuilds                both targets
//   npm run prebuilds -- linux-x64   one target
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PARTS, TARGETS, readManifest, sourcesHash } from './nativeSources.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ptyDir = join(root, 'node_modules', 'node-pty');

/** The cross tools per target architecture; null prefix: the machine's own compiler. */
const TOOLS = { x64: { prefix: null, hostArch: 'x64' }, arm64: { prefix: 'aarch64-linux-gnu-', hostArch: 'arm64' } };

function fail(msg) {
  console.error(`prebuild: ${msg}`);
  process.exit(1);
}

/** node-gyp: the one npm runs scripts with, else the one on PATH. */
function nodeGyp() {
  const bundled = process.env.npm_config_node_gyp;
  return bundled && existsSync(bundled) ? [process.execPath, bundled] : ['node-gyp'];
}

/** Node's headers (node-gyp must not download them): npm_config_nodedir, else the running node's prefix. */
function nodeDir() {
  const given = process.env.npm_config_nodedir;
  if (given && existsSync(join(given, 'include', 'node', 'node_api.h'))) return given;
  const prefix = dirname(dirname(process.execPath));
  if (existsSync(join(prefix, 'include', 'node', 'node_api.h'))) return prefix;
  return fail(`no Node headers (include/node/node_api.h) under ${prefix}; set npm_config_nodedir`);
}

function run(cmd, args, opts) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.status !== 0) fail(`${[cmd, ...args].join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})`);
}

/** Build one binding.gyp tree (copied into a temp folder) for `arch`; returns its build/Release folder. */
function gypBuild(work, arch) {
  const tools = TOOLS[arch];
  const env = { ...process.env };
  if (tools.prefix !== null && process.arch !== arch) {
    if (spawnSync(`${tools.prefix}g++`, ['--version'], { stdio: 'ignore' }).status !== 0) fail(`${tools.prefix}g++ is missing: apt-get install g++-aarch64-linux-gnu`);
    Object.assign(env, { CC: `${tools.prefix}gcc`, CXX: `${tools.prefix}g++`, LINK: `${tools.prefix}g++`, AR: `${tools.prefix}ar` });
  }
  symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'));
  const [cmd, ...pre] = nodeGyp();
  run(cmd, [...pre, 'rebuild', `--arch=${arch}`, `--nodedir=${nodeDir()}`, '--release'], { cwd: work, env });
  return join(work, 'build', 'Release');
}

function strip(file, arch) {
  const tool = TOOLS[arch].prefix !== null && process.arch !== arch ? `${TOOLS[arch].prefix}strip` : 'strip';
  run(tool, ['--strip-unneeded', file], {});
}

/** The newest GLIBC_x.y symbol version a binary needs, so the manifest says which systems it fits. */
function glibcNeeded(file, arch) {
  const tool = TOOLS[arch].prefix !== null && process.arch !== arch ? `${TOOLS[arch].prefix}objdump` : 'objdump';
  const r = spawnSync(tool, ['-T', file], { encoding: 'utf8' });
  const versions = [...(r.stdout ?? '').matchAll(/GLIBC_(\d+)\.(\d+)(?:\.(\d+))?/g)].map((m) => [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)]);
  versions.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const top = versions.at(-1);
  return top ? top.filter((n, i) => i < 2 || n > 0).join('.') : null;
}

function buildTarget(target) {
  const arch = target.split('-')[1];
  if (!TOOLS[arch]) fail(`unknown target ${target}`);
  const out = join(root, 'prebuilds', target);
  const tmp = mkdtempSync(join(tmpdir(), `loom-prebuild-${target}-`));
  try {
    const loom = join(tmp, 'loom');
    mkdirSync(loom);
    copyFileSync(join(root, 'binding.gyp'), join(loom, 'binding.gyp'));
    cpSync(join(root, 'native'), join(loom, 'native'), { recursive: true });
    const loomBuild = gypBuild(loom, arch);
    const pty = join(tmp, 'node-pty');
    mkdirSync(pty);
    copyFileSync(join(ptyDir, 'binding.gyp'), join(pty, 'binding.gyp'));
    cpSync(join(ptyDir, 'src'), join(pty, 'src'), { recursive: true });
    const ptyBuild = gypBuild(pty, arch);
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const glibc = {};
    for (const part of PARTS) {
      const from = join(part.name === 'node-pty' ? ptyBuild : loomBuild, part.file);
      const to = join(out, part.file);
      copyFileSync(from, to);
      strip(to, arch);
      glibc[part.name] = glibcNeeded(to, arch);
    }
    return glibc;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (!existsSync(join(ptyDir, 'package.json'))) fail('node_modules/node-pty is missing: npm ci first (its sources are built here)');
const asked = process.argv.slice(2);
const targets = asked.length > 0 ? asked : TARGETS;
const manifest = readManifest(root) ?? { targets: {} };
for (const t of targets) {
  console.log(`prebuild: ${t}`);
  manifest.targets[t] = { glibc: buildTarget(t) };
}
manifest.sources = sourcesHash(root);
manifest['node-pty'] = JSON.parse(readFileSync(join(ptyDir, 'package.json'), 'utf8')).version;
manifest.napi = 8;
writeFileSync(join(root, 'prebuilds', 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`prebuild: wrote ${targets.join(', ')} and prebuilds/manifest.json`);
