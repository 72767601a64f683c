import { expect, it } from '@jest/globals';
import type { PtyProcess as IPty } from '../../src/adapters/ptyTypes.js';
import { CLI, freePort, tempDir } from '../helpers/daemon.js';
import { describeUnless, ptySkip, requirePty } from '../helpers/nativeParts.js';

/** `loom daemon <args>` on a terminal (a pty), as a person starts it; its output as it comes. */
async function onTerminal(args: string[]): Promise<{ pty: IPty; port: number; out: () => string; stop(): Promise<void> }> {
  const port = await freePort();
  const pty = requirePty().spawn(process.execPath, [CLI, 'daemon', ...args], {
    cols: 200, rows: 30, env: { ...(process.env as Record<string, string>), SVC_PORT: String(port), SVC_DATA_DIR: tempDir() },
  });
  let out = '';
  const exited = new Promise<void>((r) => pty.onExit(() => r()));
  pty.onData((d) => { out += d; });
  for (let i = 0; i < 300 && !out.includes('loom listening on'); i++) await new Promise((r) => setTimeout(r, 50));
  return {
    pty, port, out: () => out.replace(/\r/g, ''),
    async stop() {
      pty.kill('SIGTERM');
      await exited;
    },
  };
}

describeUnless(ptySkip)('behaviour.md §2.13 loom daemon on a terminal', () => {
  it('when it runs in the foreground on a TTY, then each request gets a short line on stderr', async () => {
    const d = await onTerminal([]);
    try {
      expect(d.out()).toContain(`loom listening on http://127.0.0.1:${d.port}`);
      await fetch(`http://127.0.0.1:${d.port}/health`);
      await fetch(`http://127.0.0.1:${d.port}/nowhere`);
      for (let i = 0; i < 100 && !d.out().includes('/nowhere'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(d.out()).toMatch(/\n\d\d:\d\d:\d\d GET \/health 200 \d+ ms\n/);
      expect(d.out()).toMatch(/\n\d\d:\d\d:\d\d GET \/nowhere 404 \d+ ms\n/);
    } finally {
      await d.stop();
    }
  });

  it('when --quiet is given, then the terminal shows only the ready line', async () => {
    const d = await onTerminal(['--quiet']);
    try {
      await fetch(`http://127.0.0.1:${d.port}/health`);
      await new Promise((r) => setTimeout(r, 300));
      expect(d.out()).toBe(`loom listening on http://127.0.0.1:${d.port}\n`);
    } finally {
      await d.stop();
    }
  });
});
