import { describe, expect } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, run } from '../helpers/pack.js';
import { itUnless } from '../helpers/nativeParts.js';

/*
 * behaviour.md §17: node-pty's JavaScript is bundled into dist/node-pty.cjs, and from there node-pty's
 * own loader must take the prebuilt binding of this machine (prebuilds/<platform>-<arch>/pty.node),
 * not a binding of node-pty's package: that is what keeps the PTY where npm removed node-pty.
 */
const target = `${process.platform}-${process.arch}`;
const prebuilt = join(process.cwd(), 'prebuilds', target, 'pty.node');
const skip = existsSync(prebuilt) ? null : `no prebuilt part for ${target}`;

describe('dist/node-pty.cjs (npm run build)', () => {
  itUnless(skip)('when it opens a PTY, then the binding it loaded is the prebuilt one and a program sees a terminal', async () => {
    const script = `
      const pty = require(${JSON.stringify(join(process.cwd(), 'dist', 'node-pty.cjs'))});
      const p = pty.spawn('/bin/sh', ['-c', '[ -t 1 ] && echo on-a-terminal'], { cols: 80, rows: 24, cwd: '/', env: { PATH: '/usr/bin:/bin' } });
      let out = '';
      p.onData((d) => { out += d; });
      p.onExit(() => console.log(JSON.stringify({ out, bindings: Object.keys(require.cache).filter((k) => k.endsWith('.node')) })));
    `;
    const r = await run(process.execPath, ['-e', script], { env: cleanEnv(), timeoutMs: 30_000 });
    expect(r.code).toBe(0);
    const seen = JSON.parse(r.stdout) as { out: string; bindings: string[] };
    expect(seen.bindings).toEqual([prebuilt]);
    expect(seen.out).toContain('on-a-terminal');
  });
});
