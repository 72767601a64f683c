import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/daemon.js';
import { copyProject, npmPack, type PackResult } from '../helpers/pack.js';

// A build and a pack on a loaded machine: minutes, not seconds.
jest.setTimeout(600_000);

describe('npm pack (behaviour.md §17)', () => {
  const dir = tempDir('loom-pack-');
  let pack: PackResult;
  let paths: string[];

  beforeAll(async () => {
    // A copy without dist/: the tarball can only hold a build when prepack made it.
    const project = copyProject(join(dir, 'project'));
    pack = await npmPack(project, dir);
    paths = pack.files.map((f) => f.path);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prepack builds the CLI, and the tarball holds it with the bin, the inspector page, the native sources, README and licence', () => {
    for (const p of ['package.json', 'README.md', 'LICENSE', 'bin/loom.js', 'dist/cli/main.js', 'dist/effects/parseWorker.js', 'web/inspector/index.html', 'web/inspector/app.js', 'native/spawn.cc', 'native/fd.cc', 'binding.gyp', 'docs/cli.md']) {
      expect(paths).toContain(p);
    }
  });

  it('holds the native parts prebuilt for linux-x64 and linux-arm64, node-pty\'s bundled JavaScript and the install step (behaviour.md §17)', () => {
    for (const target of ['linux-x64', 'linux-arm64']) {
      for (const part of ['loom_spawn.node', 'loom_fd.node', 'loom_sandbox', 'pty.node']) expect(paths).toContain(`prebuilds/${target}/${part}`);
    }
    for (const p of ['prebuilds/manifest.json', 'dist/node-pty.cjs', 'scripts/install.mjs', 'scripts/nativeSources.mjs']) expect(paths).toContain(p);
  });

  it('holds no tests, fixtures, benches, examples, sources, source maps or build output', () => {
    // Of scripts/, only the install step and what it imports ship.
    const installStep = new Set(['scripts/install.mjs', 'scripts/nativeSources.mjs']);
    const unwanted = paths.filter((p) => !installStep.has(p) && (/^(test|bench|examples|src|scripts|build|node_modules|\.ci)\//.test(p) || p.endsWith('.map') || /\.test\./.test(p) || /fixtures/.test(p)));
    expect(unwanted).toEqual([]);
  });

  it('is under 3 MB', () => {
    expect(pack.size).toBeLessThan(3 * 1024 * 1024);
  });
});
