import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from '../helpers/daemon.js';
import { docsApp, type DocsApp } from './helpers.js';

/**
 * The workspace policy of behaviour.md §1.4 through every file command: home ∪ allowedPaths,
 * symlinks resolved, exact FORBIDDEN text.
 */
let d: DocsApp;
let outside: string;
let real: string;
let linkToReal: string;
beforeAll(async () => {
  outside = tempDir('loom-outside-');
  writeFileSync(join(outside, 'secret.md'), '# Secret\n');
  // An allowed path that is itself a symlink: allowed only within its real target.
  const base = tempDir('loom-allowed-');
  real = join(base, 'real');
  mkdirSync(real);
  writeFileSync(join(real, 'ok.md'), '# Ok\n');
  writeFileSync(join(base, 'sibling.md'), '# Sibling\n');
  symlinkSync(join(outside, 'secret.md'), join(real, 'escape.md'));
  linkToReal = join(base, 'link');
  symlinkSync(real, linkToReal);
  d = await docsApp({ allowedPaths: [linkToReal] });
  mkdirSync(join(d.home, 'notes'), { recursive: true });
  writeFileSync(join(d.home, 'notes/in.md'), '# In\n');
  symlinkSync(outside, join(d.home, 'out'));
  symlinkSync(join(outside, 'secret.md'), join(d.home, 'notes/secret-link.md'));
});
afterAll(async () => { await d.close(); });

const forbidden = (display: string) => `ERROR(FORBIDDEN): Path outside the workspace: ${display}`;

describe('workspace policy (behaviour.md §1.4)', () => {
  it('when a path climbs out of the home with .., then FORBIDDEN with its absolute display', async () => {
    expect((await d.run('p1', '/open ~/../x.md')).body).toBe(forbidden(resolve(d.home, '../x.md')));
    await d.run('p1', '/open ~/notes/in.md');
    expect((await d.run('p1', '/open ../../x.md')).code).toBe('FORBIDDEN');
    expect((await d.run('p1', '/edit ../../../etc/passwd')).body).toBe(forbidden(resolve(d.home, 'notes', '../../../etc/passwd')));
  });
  it('when an absolute path outside is used by any file command, then FORBIDDEN', async () => {
    const p = join(outside, 'secret.md');
    for (const cmd of [`/open ${p}`, `/source ${p}`, `/ls ${outside}`, `/edit ${p}`, `/write ${p}\nx`, `/append ${p}\nx`, `/replace ${p} --lines 1\nx`, `/undo ${p}`]) {
      expect({ cmd, body: (await d.run('p2', cmd)).body }).toEqual({ cmd, body: forbidden(cmd.startsWith('/ls') ? outside : p) });
    }
  });
  it('when a symlink inside the home points outside, then FORBIDDEN (file and folder links)', async () => {
    expect((await d.run('p3', '/open ~/notes/secret-link.md')).body).toBe(forbidden('~/notes/secret-link.md'));
    expect((await d.run('p3', '/open ~/out/secret.md')).body).toBe(forbidden('~/out/secret.md'));
    expect((await d.run('p3', '/ls ~/out')).body).toBe(forbidden('~/out'));
    expect((await d.run('p3', '/write ~/out/new.md\nx')).body).toBe(forbidden('~/out/new.md'));
  });
  it('when an allowed path is a symlink, then files within its real target are allowed', async () => {
    expect((await d.run('p4', `/open ${join(linkToReal, 'ok.md')}`)).meta?.title).toBe('Ok');
    expect((await d.run('p4', `/open ${join(real, 'ok.md')}`)).meta?.title).toBe('Ok');
    expect((await d.run('p4', `/write ${join(linkToReal, 'made.md')}\nhi`)).body).toBe(`Created ${join(linkToReal, 'made.md')} (2 bytes, 1 line)`);
  });
  it('when an allowed symlinked path is left (its parent, or a link inside it pointing out), then FORBIDDEN', async () => {
    expect((await d.run('p5', `/open ${join(linkToReal, '..', 'sibling.md')}`)).code).toBe('FORBIDDEN');
    expect((await d.run('p5', `/open ${join(linkToReal, 'escape.md')}`)).body).toBe(forbidden(join(linkToReal, 'escape.md')));
  });
  it('when a nav file or a relative link points outside, then it is refused', async () => {
    writeFileSync(join(d.home, 'notes/nav-out.md'), `[!nav:main](${join(outside, 'secret.md')})\n# N\n`);
    const r = await d.run('p6', '/open ~/notes/nav-out.md');
    expect(r.body).toContain(`warning: line 1: cannot read nav file ${join(outside, 'secret.md')}: outside the workspace`);
  });
});

describe('reloads re-check the policy (behaviour.md §1.4)', () => {
  it('when an opened file is replaced by a link to outside, then /refresh is FORBIDDEN', async () => {
    const { rmSync } = await import('node:fs');
    writeFileSync(join(d.home, 'notes/swap.md'), '# Swap\n');
    expect((await d.run('p7', '/open ~/notes/swap.md')).ok).toBe(true);
    rmSync(join(d.home, 'notes/swap.md'));
    symlinkSync(join(outside, 'secret.md'), join(d.home, 'notes/swap.md'));
    expect((await d.run('p7', '/refresh')).body).toBe(forbidden('~/notes/swap.md'));
  });
});
