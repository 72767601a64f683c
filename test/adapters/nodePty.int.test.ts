import { expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { directWrite, ptyMasterFd } from '../../src/adapters/nodePty.js';
import type { PtyProcess as IPty } from '../../src/adapters/ptyTypes.js';
import { describeUnless, ptySkip, requirePty } from '../helpers/nativeParts.js';

describeUnless(ptySkip)('PTY writes (src/adapters/nodePty.ts directWrite)', () => {
  it('when writes overflow the tty buffer, every byte still arrives once and in order (the rest goes through node-pty\'s queue)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loom-ptywrite-'));
    const out = join(dir, 'out');
    try {
      // Raw mode: the tty passes bytes as they are; `cat` copies them to a file until the end marker.
      const p: IPty = requirePty().spawn('/bin/sh', ['-c', `stty raw -echo; head -c 400000 > '${out}'`], { cols: 80, rows: 24, cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, encoding: null });
      const fd = ptyMasterFd(p);
      if (fd === null) throw new Error('node-pty no longer keeps its master descriptor in _fd: see docs/adapters.md');
      const write = directWrite(p, fd);
      await new Promise((r) => setTimeout(r, 300));
      const parts: string[] = [];
      // 200 writes of 2,000 bytes each: far more than the tty takes at once, so some go short or EAGAIN.
      for (let i = 0; i < 200; i++) parts.push(`${String(i).padStart(5, '0')}${'x'.repeat(1994)}\n`);
      for (const part of parts) write(part);
      const code = await new Promise<number>((resolve) => p.onExit(({ exitCode }) => resolve(exitCode)));
      expect(code).toBe(0);
      expect(readFileSync(out, 'utf8')).toBe(parts.join(''));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('node-pty still has the internals the adapter reads (a descriptor and an array write queue); a change here means docs/adapters.md must be revisited', async () => {
    const p: IPty = requirePty().spawn('/bin/sh', ['-c', 'exit 0'], { cols: 80, rows: 24, cwd: tmpdir(), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, encoding: null });
    try {
      expect(typeof ptyMasterFd(p)).toBe('number');
      expect(Array.isArray((p as unknown as { _writeStream?: { _writeQueue?: unknown } })._writeStream?._writeQueue)).toBe(true);
    } finally {
      await new Promise<void>((resolve) => p.onExit(() => resolve()));
    }
  });
});
