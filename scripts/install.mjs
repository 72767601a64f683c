#!/usr/bin/env node
// Loom's install step (package.json "install"; behaviour.md §17, docs/packaging.md "Prebuilt native
// parts"). The prebuilt native parts come first: when every one of prebuilds/<platform>-<arch> loads
// here and was made from the sources in this package, nothing is built (and an earlier local build is
// removed, so it cannot shadow them). Otherwise node-gyp builds the parts from native/; where that
// fails too, one line names each part that is missing and what Loom does without it. It never fails
// the install: every part is optional.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PARTS, readManifest, sourcesHash } from './nativeSources.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = `${process.platform}-${process.arch}`;
const prebuilt = join(root, 'prebuilds', target);

/** What each part does for Loom, for the line that names a missing one. */
const WITHOUT = {
  loom_spawn: 'commands start through child_process',
  loom_fd: 'a few descriptor calls fall back',
  loom_sandbox: 'the sandbox is unavailable',
  'node-pty': 'bash topics run on pipes',
};

/** Why the prebuilt part does not fit here, or null when it does (loaded in a child, so a crash cannot stop the install). */
function prebuiltProblem(part) {
  const file = join(prebuilt, part.file);
  if (!existsSync(file)) return `no prebuilt part for ${target}`;
  const r = part.addon
    ? spawnSync(process.execPath, ['-e', 'require(process.argv[1])', file], { encoding: 'utf8' })
    : spawnSync(file, [], { encoding: 'utf8' });
  if (r.error) return r.error.message;
  const ok = part.addon ? r.status === 0 : r.status === 126 && r.stderr.startsWith(`${part.name}:`);
  return ok ? null : (r.stderr.split('\n').find((l) => /\S/.test(l)) ?? `exit ${r.status}`).trim();
}

/** node-gyp rebuild of Loom's binding.gyp: the one npm runs scripts with, else the one on PATH. */
function localBuild() {
  const bundled = process.env.npm_config_node_gyp;
  const [cmd, ...args] = bundled && existsSync(bundled) ? [process.execPath, bundled] : ['node-gyp'];
  const r = spawnSync(cmd, [...args, 'rebuild'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (r.status === 0) return null;
  if (r.error) return r.error.message;
  const stack = (r.stderr ?? '').match(/^gyp ERR! stack Error: (.*)$/m);
  return `node-gyp rebuild: ${stack ? stack[1].trim() : `exit ${r.status}`}`;
}

/**
 * Whether node-pty's own package has a binding for this machine (its install ran before this one;
 * a failed one leaves the folder until npm removes it at the end).
 */
function ptyPackageHasBinding() {
  return [join(root, 'node_modules', 'node-pty'), join(root, '..', 'node-pty')].some((dir) =>
    existsSync(join(dir, 'build', 'Release', 'pty.node')) || existsSync(join(dir, 'prebuilds', target, 'pty.node')));
}

function main() {
  if (process.platform !== 'linux') return; // Loom's own parts are Linux only; node-pty's package serves other systems.
  const loomParts = PARTS.filter((p) => p.name !== 'node-pty');
  const problems = new Map(loomParts.map((p) => [p.name, prebuiltProblem(p)]));
  const current = readManifest(root)?.sources === sourcesHash(root);
  const fits = [...problems.values()].every((p) => p === null);
  const missing = [];
  if (fits && current) {
    rmSync(join(root, 'build'), { recursive: true, force: true });
  } else {
    const failed = localBuild();
    if (failed !== null) {
      const absent = [...problems].filter(([, problem]) => problem !== null);
      const reasons = [...new Set(absent.map(([, problem]) => problem))].join('; ');
      if (absent.length > 0) missing.push(`${absent.map(([name]) => name).join(', ')} (${reasons}; local build failed: ${failed}): without them ${absent.map(([name]) => WITHOUT[name]).join(', ')}`);
      else console.warn(`loom: the prebuilt native parts were made from other sources than native/ and the local build failed (${failed}); using the prebuilt ones`);
    }
  }
  const pty = PARTS.find((p) => p.name === 'node-pty');
  const ptyProblem = prebuiltProblem(pty);
  if (ptyProblem !== null && !ptyPackageHasBinding()) {
    missing.push(`node-pty (${ptyProblem}, and node-pty's own install did not succeed): without it ${WITHOUT['node-pty']}`);
  }
  if (missing.length > 0) console.warn(`loom: native parts missing: ${missing.join('; ')}`);
}

main();
