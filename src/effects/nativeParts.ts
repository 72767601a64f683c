import { spawnSync } from 'node:child_process';
import { accessSync, constants as fsConstants, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PtyModule } from '../adapters/ptyTypes.js';
import { errorMessage } from '../domain/errors.js';

/*
 * Where Loom's native parts come from (behaviour.md §17, docs/packaging.md "Prebuilt native parts"):
 * a local build (`build/Release`, made by the install step only when no prebuilt part fits, or by a
 * developer on purpose) and the prebuilt parts the package carries (`prebuilds/<platform>-<arch>`).
 * Each part records where it came from, or why it is missing, so `/describe` and every message
 * that depends on a part can name it.
 */

/** The native parts, by the name the install line, `/describe` and the messages use. */
export type NativePartName = 'loom_spawn' | 'loom_fd' | 'loom_sandbox' | 'node-pty';

/** Where a loaded part came from: Loom's local build, Loom's prebuilt parts, or node-pty's own package. */
export type NativeSource = 'build' | 'prebuilt' | 'package';

/** One part: loaded from `source`, or missing for `reason`. */
export type NativePartStatus = { loaded: true; source: NativeSource } | { loaded: false; reason: string };

/** The package root: src/effects and dist/cli (the bundle's chunks) both sit two folders below it. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const requireHere = createRequire(import.meta.url);
const status = new Map<NativePartName, NativePartStatus>();

/** The prebuilt parts' folder for this machine (`linux-x64`, `linux-arm64`, …). */
export function prebuiltFolder(root: string = ROOT): string {
  return join(root, 'prebuilds', `${process.platform}-${process.arch}`);
}

/** Each place a part may be, first the local build (it exists only when made on purpose), then the prebuilt one. */
function candidates(file: string): Array<{ path: string; source: NativeSource }> {
  return [
    { path: join(ROOT, 'build', 'Release', file), source: 'build' },
    { path: join(prebuiltFolder(), file), source: 'prebuilt' },
  ];
}

/** Why nothing was found: the places looked at, or the last load error. */
function missingReason(file: string, errors: string[]): string {
  if (errors.length > 0) return errors.join('; ');
  return `no prebuilt ${file} for ${process.platform}-${process.arch} and no local build`;
}

/** Load a Node addon of Loom's (`loom_spawn`, `loom_fd`); null when none loads, with the reason recorded. */
export function loadAddon<T>(name: 'loom_spawn' | 'loom_fd'): T | null {
  const file = `${name}.node`;
  const errors: string[] = [];
  for (const c of candidates(file)) {
    if (!existsSync(c.path)) continue;
    try {
      const mod = requireHere(c.path) as T;
      status.set(name, { loaded: true, source: c.source });
      return mod;
    } catch (err) {
      errors.push(`${c.source} ${file} does not load: ${firstLine(errorMessage(err))}`);
    }
  }
  status.set(name, { loaded: false, reason: missingReason(file, errors) });
  return null;
}

/**
 * The path of the sandbox's exec wrapper (`loom_sandbox`), or null. A candidate counts when it runs
 * here: started with no program it must answer with its own usage line (exit 126), which a binary
 * for another machine or a newer C library cannot do.
 */
export function findExecutable(name: 'loom_sandbox'): string | null {
  const errors: string[] = [];
  for (const c of candidates(name)) {
    if (!existsSync(c.path)) continue;
    const problem = probeExecutable(c.path, name);
    if (problem === null) {
      status.set(name, { loaded: true, source: c.source });
      return c.path;
    }
    errors.push(`${c.source} ${name} ${problem}`);
  }
  status.set(name, { loaded: false, reason: missingReason(name, errors) });
  return null;
}

function probeExecutable(path: string, name: string): string | null {
  try {
    accessSync(path, fsConstants.X_OK);
  } catch {
    return 'is not executable';
  }
  const r = spawnSync(path, [], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.error) return `does not run: ${r.error.message}`;
  if (r.status === 126 && r.stderr.startsWith(`${name}:`)) return null;
  return `does not run: ${firstLine(r.stderr) || `exit ${r.status ?? r.signal}`}`;
}

/**
 * node-pty: first Loom's bundled copy of its JavaScript (dist/node-pty.cjs, made by `npm run build`),
 * which finds the binding in Loom's prebuilt parts (or a local build); then node-pty's own package,
 * when its install built or brought a binding. Null, with the reason recorded, when neither loads.
 */
export function loadPtyLibrary(): PtyModule | null {
  const errors: string[] = [];
  const bundled = join(ROOT, 'dist', 'node-pty.cjs');
  if (!existsSync(bundled)) errors.push('no bundled node-pty (dist/node-pty.cjs: npm run build makes it from node_modules/node-pty)');
  const tries: Array<{ id: string; source: NativeSource; label: string }> = [
    ...(existsSync(bundled) ? [{ id: bundled, source: 'prebuilt' as const, label: 'bundled node-pty with the prebuilt binding' }] : []),
    { id: 'node-pty', source: 'package', label: 'the node-pty package' },
  ];
  for (const t of tries) {
    try {
      const mod = requireHere(t.id) as PtyModule;
      status.set('node-pty', { loaded: true, source: t.source });
      return mod;
    } catch (err) {
      errors.push(`${t.label}: ${firstLine(errorMessage(err))}`);
    }
  }
  status.set('node-pty', { loaded: false, reason: errors.join('; ') });
  return null;
}

/** What is known of a part: null until something asked for it. */
export function nativePartStatus(name: NativePartName): NativePartStatus | null {
  return status.get(name) ?? null;
}

/** Set a part's status by hand: a part turned off on purpose (LOOM_PTY=0, LOOM_NATIVE_SPAWN=0, another OS). */
export function recordNativePart(name: NativePartName, s: NativePartStatus): void {
  status.set(name, s);
}

function firstLine(s: string): string {
  return s.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '';
}
