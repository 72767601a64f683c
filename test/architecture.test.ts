import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The dependency rule of docs/architecture.md, checked on import specifiers: an arrow means
 * "may import"; nothing imports upward. Layers are the first folder under src/ (files directly in
 * src/ are the composition root and may import anything).
 */
const ALLOWED: Record<string, string[]> = {
  domain: ['domain'],
  sfmd: ['domain', 'sfmd'],
  machines: ['domain', 'machines'],
  stores: ['domain', 'stores', 'effects'],
  effects: ['domain', 'sfmd', 'effects'],
  commands: ['domain', 'sfmd', 'commands', 'effects'],
  actors: ['domain', 'machines', 'commands', 'effects', 'actors', 'sfmd'],
  mcp: ['domain', 'mcp', 'actors', 'commands'],
  http: ['domain', 'http', 'actors', 'mcp', 'commands', 'stores', 'effects', 'sfmd', 'version.ts'],
  features: ['*'],
  inspector: ['domain', 'inspector', 'actors', 'http'],
  client: ['domain', 'client'],
  cli: ['domain', 'client', 'cli', 'version.ts'],
  replay: ['domain', 'client', 'replay'],
};
/** Packages a layer must never import (architecture.md: commands never xstate, express or the client). */
const FORBIDDEN_PACKAGES: Record<string, RegExp> = {
  domain: /^(xstate|express|lowdb)/,
  commands: /^(xstate|express)/,
  machines: /^(express|lowdb|node:)/,
  client: /^(xstate|express|lowdb)/,
  cli: /^(xstate|express|lowdb)/,
};
/** Documented exceptions: `loom daemon` loads the composition root lazily. */
const EXCEPTIONS = new Set(['cli/daemon.ts -> main.ts']);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const src = resolve('src');
const layerOf = (abs: string) => {
  const rel = relative(src, abs);
  return rel.includes('/') ? rel.split('/')[0] : rel;
};

describe('architecture dependency rule', () => {
  const violations: string[] = [];
  for (const file of files(src)) {
    const from = layerOf(file);
    const allowed = ALLOWED[from];
    if (!allowed) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)) {
      const spec = m[1];
      if (spec.startsWith('.')) {
        const target = layerOf(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
        const edge = `${relative(src, file)} -> ${relative(src, resolve(dirname(file), spec.replace(/\.js$/, '.ts')))}`;
        if (!allowed.includes('*') && !allowed.includes(target) && !EXCEPTIONS.has(edge)) violations.push(edge);
      } else if (FORBIDDEN_PACKAGES[from]?.test(spec)) {
        violations.push(`${relative(src, file)} -> package ${spec}`);
      }
    }
  }
  it('no module imports a layer it may not', () => {
    expect(violations).toEqual([]);
  });
});
