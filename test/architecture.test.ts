import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The dependency rule of docs/architecture.md, checked on import specifiers (type imports included):
 * an arrow means "may import"; nothing imports upward. Layers are the first folder under src/; the
 * files directly in src/ are checked one by one (the composition root may import anything, the
 * others only what they need). A file in an undeclared folder or an undeclared root file fails.
 */
const ALLOWED: Record<string, string[]> = {
  domain: ['domain'],
  sfmd: ['domain', 'sfmd'],
  machines: ['domain', 'machines'],
  stores: ['domain', 'stores', 'effects'],
  effects: ['domain', 'sfmd', 'effects', 'adapters'],
  commands: ['domain', 'sfmd', 'commands', 'effects'],
  actors: ['domain', 'machines', 'commands', 'effects', 'actors', 'sfmd', 'adapters'],
  // Plain services over the tree (capabilities, events, installs, traces, inspection, shells). Never
  // a command: what commands and services share (the caller, daemon facts) is in domain/commandCaller.ts.
  services: ['domain', 'machines', 'effects', 'actors', 'services', 'sfmd', 'adapters'],
  // The only files that use a dependency's private internals (each pinned by a test, its cost in docs/adapters.md).
  adapters: ['domain', 'adapters'],
  mcp: ['domain', 'mcp', 'actors'],
  // Routes reach state through the system facade and the services: never a store, an effect or a command.
  http: ['domain', 'http', 'actors', 'services', 'mcp'],
  features: ['*'],
  inspector: ['domain', 'inspector', 'actors', 'services', 'http'],
  client: ['domain', 'client'],
  // `loom replay` runs the replayer (loaded when that command runs).
  cli: ['domain', 'client', 'cli', 'replay', 'version.ts'],
  replay: ['domain', 'client', 'replay'],
  // Root files.
  // The process entry of the daemon: it also tunes this process's heap once ready (effects/heapTuning.ts).
  'main.ts': ['config.ts', 'daemon.ts', 'stores', 'domain', 'effects'],
  'daemon.ts': ['*'],
  'features.ts': ['features', 'http', 'domain', 'actors'],
  'config.ts': ['domain'],
  'version.ts': [],
};
/**
 * Files held to less than their layer allows: the capability service reaches the record files only
 * through the port the feature hands it (never a store or an effect of its own).
 */
const NARROWER: Record<string, string[]> = {
  'services/capabilities.ts': ['domain', 'machines', 'actors', 'services'],
};
/** Packages a layer must never import (architecture.md: commands never xstate, express or the client). */
const FORBIDDEN_PACKAGES: Record<string, RegExp> = {
  domain: /^(xstate|express|lowdb)/,
  commands: /^(xstate|express)/,
  machines: /^(express|lowdb|node:)/,
  actors: /^(express)/,
  services: /^(express)/,
  mcp: /^(express)/,
  client: /^(xstate|express|lowdb)/,
  cli: /^(xstate|express|lowdb)/,
};
/**
 * Documented exceptions: `loom daemon` loads the composition root lazily; `loom inspect <file>` loads
 * the offline server (the page's files and the Host/Origin guard, no daemon) when it runs.
 */
const EXCEPTIONS = new Set([
  'cli/daemonEntry.ts -> main.ts',
  'cli/inspectFiles.ts -> inspector/offline.ts',
  // The facade composes the inspection (it feeds it every topic's events).
  'actors/system.ts -> services/inspection.ts',
  'actors/system.ts -> services/inspectionSnapshot.ts',
]);
/** Import cycles still to break, each with the issue that owns it (none left). */
const KNOWN_CYCLES = new Set<string>();

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const src = resolve('src');
const layerOf = (abs: string) => relative(src, abs).split('/')[0];
const specifiers = (text: string) => [...text.matchAll(/(?:from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]);
const target = (file: string, spec: string) => resolve(dirname(file), spec.replace(/\.js$/, '.ts'));

describe('architecture dependency rule', () => {
  const violations: string[] = [];
  const graph = new Map<string, string[]>();
  for (const file of files(src)) {
    const from = layerOf(file);
    const allowed = NARROWER[relative(src, file)] ?? ALLOWED[from];
    if (!allowed) violations.push(`${relative(src, file)}: undeclared layer or root file`);
    const deps: string[] = [];
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) {
        const to = target(file, spec);
        deps.push(to);
        const edge = `${relative(src, file)} -> ${relative(src, to)}`;
        if (allowed && !allowed.includes('*') && !allowed.includes(layerOf(to)) && !EXCEPTIONS.has(edge)) violations.push(edge);
      } else if (FORBIDDEN_PACKAGES[from]?.test(spec)) {
        violations.push(`${relative(src, file)} -> package ${spec}`);
      }
    }
    graph.set(file, deps);
  }

  it('no module imports a layer it may not, and every file belongs to a declared layer', () => {
    expect(violations).toEqual([]);
  });

  it('no two modules import each other, directly or around a loop (type imports included)', () => {
    expect(cycles(graph).filter((c) => !KNOWN_CYCLES.has(c))).toEqual([]);
  });
});

/** Strongly connected components of more than one module (Tarjan), each as its sorted relative paths. */
function cycles(graph: Map<string, string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      scc.push(relative(src, w));
    } while (w !== v);
    if (scc.length > 1) out.push(scc.sort().join(' '));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('private internals of dependencies (architecture.md "no private internals")', () => {
  it('no file outside src/adapters reads or replaces an underscore member of another object', () => {
    // `x._name` or `'_name'` property access; our own code has no underscore members.
    const uses = files(src)
      .filter((f) => layerOf(f) !== 'adapters')
      .flatMap((f) => readFileSync(f, 'utf8').split('\n').map((line, i) => ({ f, i, line })))
      .filter(({ line }) => /\)?\._[A-Za-z]\w*|\[['"]_[A-Za-z]\w*['"]\]/.test(line.replace(/\/\/.*$/, '')))
      .map(({ f, i, line }) => `${relative(src, f)}:${i + 1}: ${line.trim()}`);
    expect(uses).toEqual([]);
  });
});

describe('docs/architecture.md names only files that exist', () => {
  it('every source file it names (relative to src/ or the repository) exists', () => {
    const text = readFileSync('docs/architecture.md', 'utf8');
    const named = [...text.matchAll(/`((?:src\/)?(?:[a-z]+\/)+[A-Za-z0-9_.-]+\.(?:ts|mjs|cc|h))`/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(20);
    const missing = named.filter((p) => ![p, join('src', p)].some((c) => { try { return statSync(c).isFile(); } catch { return false; } }));
    expect(missing).toEqual([]);
  });
});

describe('small files (architecture.md house habits)', () => {
  it('each route file only translates HTTP: at most 80 lines, and no store, effect or command imported', () => {
    const routes = files(join(src, 'http', 'routes'));
    expect(routes.length).toBeGreaterThan(5);
    const long = routes.map((f) => [relative(src, f), readFileSync(f, 'utf8').split('\n').length - 1] as const).filter(([, n]) => n > 80);
    const reaching = routes.flatMap((f) => specifiers(readFileSync(f, 'utf8')).filter((sp) => sp.startsWith('.') && ['effects', 'stores', 'commands'].includes(layerOf(target(f, sp)))).map((sp) => `${relative(src, f)} -> ${sp}`));
    expect({ long, reaching }).toEqual({ long: [], reaching: [] });
  });

  it('no route reaches around the facade into its directory', () => {
    const around = files(join(src, 'http', 'routes')).filter((f) => /\bsystem\.directory\b/.test(readFileSync(f, 'utf8'))).map((f) => relative(src, f));
    expect(around).toEqual([]);
  });

  it('no file in src/actors is over 300 lines', () => {
    const long = files(join(src, 'actors')).map((f) => [relative(src, f), readFileSync(f, 'utf8').split('\n').length - 1] as const).filter(([, n]) => n > 300);
    expect(long).toEqual([]);
  });
});
