import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, npmCli, run } from '../helpers/pack.js';

/*
 * README "Tests": every tier script takes jest's arguments after `--`, a path filter included
 * (`npm run test:unit -- test/sfmd`). Each script runs as npm runs it, with `--listTests`, and must
 * list only that tier's files under the path. The e2e script's build step is left out (its own
 * tests cover the build; building here would rewrite dist/ under other running tests).
 */
const scripts = (JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** Which test files a tier script would run for `args`. */
async function listed(tier: 'unit' | 'integration' | 'e2e', args: string[]): Promise<string[]> {
  const env = cleanEnv();
  const r = tier === 'e2e'
    ? await run('/bin/sh', ['-c', `${scripts['test:e2e'].replace(/^npm run build && /, '')} "$@"`, 'sh', ...args], { env, timeoutMs: 120_000 })
    : await run(process.execPath, [npmCli(), 'run', '--silent', `test:${tier}`, '--', ...args], { env, timeoutMs: 120_000 });
  expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
  return r.stdout.split('\n').filter((l) => l.endsWith('.ts')).map((l) => l.slice(process.cwd().length + 1)).sort();
}

describe('npm run test:<tier> -- <path> (README "Tests")', () => {
  it('when the unit script gets a folder, then it lists that folder\'s unit tests only', async () => {
    const files = await listed('unit', ['test/sfmd', '--listTests']);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(f).toMatch(/^test\/sfmd\/[^.]+\.test\.ts$/);
  });

  it('when the integration script gets a folder, then it lists that folder\'s integration tests only', async () => {
    const files = await listed('integration', ['test/package', '--listTests']);
    expect(files).toContain('test/package/optionalTypes.int.test.ts');
    for (const f of files) expect(f).toMatch(/^test\/package\/[^.]+\.int\.test\.ts$/);
  });

  it('when the e2e script gets a folder, then it lists that folder\'s e2e tests only', async () => {
    const files = await listed('e2e', ['test/package', '--listTests']);
    expect(files).toContain('test/package/tierScripts.e2e.test.ts');
    for (const f of files) expect(f).toMatch(/^test\/package\/[^.]+\.e2e\.test\.ts$/);
  });
});
