import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cleanEnv, run } from '../helpers/pack.js';

/*
 * `npm test` leaves nothing in /tmp (docs/testing.md): jest's transform cache (tens of MiB) goes to
 * a folder inside the repository that git ignores, for every project, as jest itself resolves it.
 */
describe('where jest keeps its cache', () => {
  it('when jest resolves the configuration, then every project caches inside a git-ignored folder of the repository', async () => {
    const root = process.cwd();
    const r = await run(process.execPath, [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--showConfig'], { cwd: root, env: cleanEnv(), timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    const { configs } = JSON.parse(r.stdout) as { configs: Array<{ displayName?: { name: string }; cacheDirectory: string }> };
    expect(configs.map((c) => c.displayName?.name)).toEqual(['unit', 'integration', 'e2e']);
    const ignored = readFileSync(join(root, '.gitignore'), 'utf8').split('\n').map((l) => l.trim().replace(/\/$/, '')).filter(Boolean);
    for (const c of configs) {
      const inside = relative(root, c.cacheDirectory);
      expect(inside.startsWith('..')).toBe(false);
      expect(ignored).toContain(inside.split('/')[0]);
    }
  });
});
