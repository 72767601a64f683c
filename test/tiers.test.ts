import { describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { tempDir } from './helpers/temp.js';

/**
 * The test tiers (jest.config.js, README "Tests") are told apart by the file name; this holds the
 * names true from what each test file and the test helpers it reaches import:
 *   *.test.ts      unit: no process, no socket, no build
 *   *.int.test.ts  integration: the in-process app, sockets and helper processes; no build
 *   *.e2e.test.ts  e2e: anything, dist/ included
 * A check of imports cannot see everything (a source module may start a process on its own), so
 * the rule is the floor, not the whole definition.
 */
const ROOT = process.cwd();
const TEST = join(ROOT, 'test');
const SELF = join(TEST, 'tiers.test.ts');

type Tier = 'unit' | 'integration' | 'e2e';

/** The tier a test file's name puts it in. */
function tierOf(file: string): Tier {
  if (file.endsWith('.e2e.test.ts')) return 'e2e';
  if (file.endsWith('.int.test.ts')) return 'integration';
  return 'unit';
}

/** Packages that start processes, open sockets or drive a browser. */
const PROCESS_OR_SOCKET = /^(node:)?(child_process|cluster|net|http|https|http2|tls|dgram)$|^(ws|express|node-pty|playwright-core)$/;

/** Test helpers by what they do (paths under test/, without .ts). */
const LAUNCHER = 'helpers/daemon';
const IN_PROCESS_APP = 'helpers/app';
const NEEDS_BUILD = ['helpers/pack', 'helpers/registry'];

/** What a unit file and every test helper it reaches must not import, and why (the error's words). */
function unitProblem(spec: string): string | null {
  if (PROCESS_OR_SOCKET.test(spec)) return `imports ${spec} (processes, sockets or a browser)`;
  if (spec === LAUNCHER) return `imports test/${spec}.ts (the daemon launcher; tempDir is in test/helpers/temp.ts)`;
  if (spec === IN_PROCESS_APP) return `imports test/${spec}.ts (the in-process app)`;
  if (NEEDS_BUILD.includes(spec)) return `imports test/${spec}.ts (needs the build)`;
  return null;
}

/** What an integration file and the helpers it reaches must not use: anything that needs dist/. */
function integrationProblem(spec: string, names: string): string | null {
  if (spec === 'playwright-core') return `imports ${spec} (a browser)`;
  if (spec === LAUNCHER && /\b(startDaemon|runCli|CLI)\b/.test(names)) return `imports ${names.replace(/\s+/g, ' ').trim()} from test/${spec}.ts (the built daemon or CLI)`;
  if (NEEDS_BUILD.includes(spec)) return `imports test/${spec}.ts (needs the build)`;
  return null;
}

/** Every test file under test/ (fixtures hold documents, not tests). */
function testFiles(dir = TEST, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) {
      if (entry !== 'fixtures') testFiles(p, out);
    } else if (entry.endsWith('.test.ts')) out.push(p);
  }
  return out.sort();
}

/** The value imports of a file: what is imported (names) from where (spec); type-only imports start nothing. */
function imports(file: string): { spec: string; names: string }[] {
  const src = readFileSync(file, 'utf8');
  const out: { spec: string; names: string }[] = [];
  for (const m of src.matchAll(/^(?:import|export)\s+(type\s+)?(?:([\s\S]*?)\s+from\s+)?'([^']+)'/gm)) {
    if (!m[1]) out.push({ names: m[2] ?? '', spec: m[3] });
  }
  for (const m of src.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) out.push({ names: '*', spec: m[1] });
  return out;
}

/** Does the file name dist/ in a string (the built daemon, CLI or worker)? */
function namesDist(file: string): boolean {
  return /['"`](?:\.\/)?dist\/|['"`]dist['"`]/.test(readFileSync(file, 'utf8'));
}

/**
 * The problems of one test file for its tier: the file's own imports and those of the test helpers
 * it reaches (source modules under src/ are not followed).
 */
function tierProblems(file: string, testRoot = TEST): string[] {
  const tier = tierOf(file);
  if (tier === 'e2e') return [];
  const check = tier === 'unit' ? unitProblem : integrationProblem;
  const problems: string[] = [];
  const seen = new Set<string>();
  const visit = (f: string, via: string): void => {
    if (seen.has(f)) return;
    seen.add(f);
    // This file names dist/ only in the files it makes to test the check.
    if (f !== SELF && namesDist(f)) problems.push(`${via}names dist/ (needs the build)`);
    for (const { spec, names } of imports(f)) {
      let key = spec;
      let local: string | null = null;
      if (spec.startsWith('.')) {
        local = resolve(dirname(f), spec).replace(/\.js$/, '.ts');
        if (!local.startsWith(testRoot + '/')) continue;
        key = relative(testRoot, local).replace(/\.ts$/, '');
      }
      const problem = check(key, names);
      if (problem) problems.push(`${via}${problem}`);
      // The launcher is judged by the names taken from it (tempDir and freePort start nothing).
      else if (local && key !== LAUNCHER && existsSync(local)) visit(local, `${via}test/${key}.ts `);
    }
  };
  visit(file, '');
  return problems;
}

describe('test tiers by file name (jest.config.js projects)', () => {
  const files = testFiles();

  it('every test file imports only what its tier allows (one line per problem, with the rename that fixes it)', () => {
    const problems = files.flatMap((file) => {
      const rel = relative(ROOT, file);
      const rename = tierOf(file) === 'unit' ? '.int.test.ts or .e2e.test.ts' : '.e2e.test.ts';
      return tierProblems(file).map((p) => `${rel} (${tierOf(file)}) ${p}: rename it to ${rename}`);
    });
    expect(files.length).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  });

  it('names each problem with the helper it comes through; type imports and e2e files pass', () => {
    // A small test/ tree made for the check: a helper that reaches the launcher, files of each tier.
    const root = tempDir('loom-tiers-');
    const put = (rel: string, text: string): void => {
      mkdirSync(dirname(join(root, rel)), { recursive: true });
      writeFileSync(join(root, rel), text);
    };
    put('helpers/daemon.ts', 'export const CLI = 1;\n');
    put('helpers/temp.ts', 'export const tempDir = 1;\n');
    put('foo/support.ts', "import { startDaemon } from '../helpers/daemon.js';\n");
    put('foo/bad.test.ts', "import type { Socket } from 'node:net';\nimport { spawn } from 'node:child_process';\nimport { go } from './support.js';\n");
    put('foo/good.test.ts', "import type { Socket } from 'node:net';\nimport { tempDir } from '../helpers/temp.js';\n");
    put('foo/bad.int.test.ts', "import { startDaemon, tempDir } from '../helpers/daemon.js';\nconst cli = join('x', 'dist/cli/main.js');\n");
    put('foo/good.int.test.ts', "import { freePort, tempDir } from '../helpers/daemon.js';\nimport express from 'express';\n");
    put('foo/any.e2e.test.ts', "import { startDaemon } from '../helpers/daemon.js';\n");
    const problems = (rel: string): string[] => tierProblems(join(root, rel), root);
    expect(problems('foo/bad.test.ts')).toEqual([
      'imports node:child_process (processes, sockets or a browser)',
      'test/foo/support.ts imports test/helpers/daemon.ts (the daemon launcher; tempDir is in test/helpers/temp.ts)',
    ]);
    expect(problems('foo/good.test.ts')).toEqual([]);
    expect(problems('foo/bad.int.test.ts')).toEqual([
      'names dist/ (needs the build)',
      'imports { startDaemon, tempDir } from test/helpers/daemon.ts (the built daemon or CLI)',
    ]);
    expect(problems('foo/good.int.test.ts')).toEqual([]);
    expect(problems('foo/any.e2e.test.ts')).toEqual([]);
  });
});
