import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { openInspector } from './support.js';

/**
 * behaviour.md §13.1 slow-client rule against the built daemon: a WebSocket client that completes
 * the upgrade and then never reads, while 3,000 commands run, is closed with 1013 (seen in the close
 * frame once it reads again), a client that reads stays attached, and the daemon's memory returns.
 */
let d: RunningDaemon;
beforeAll(async () => {
  d = await startDaemon();
  await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'leo' }) });
});
afterAll(async () => {
  await d?.kill();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

/** The daemon's resident memory in MiB (Linux /proc). */
const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${d.proc.pid}/status`, 'utf8'))?.[1]) / 1024;

/** `count` `/info` commands, `inFlight` at a time over as many topics. */
async function commands(count: number, inFlight = 8): Promise<void> {
  const c = new LoomClient(d.base, 'leo');
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async (_, w) => {
    while (next < count) {
      next++;
      const out = await c.exec(`t${w}`, '/info');
      expect(out.status).toBe(200);
    }
  }));
}

/** Upgrade a raw socket to /inspect/ws, then stop reading it (the 101 head is consumed first). */
function stalledClient(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(d.port, '127.0.0.1');
    s.on('error', reject);
    let head = '';
    const onData = (c: Buffer) => {
      head += c.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      expect(head.startsWith('HTTP/1.1 101 ')).toBe(true);
      s.off('data', onData);
      s.pause();
      // Whatever came after the head (the snapshot) goes back to be read with the rest later.
      const rest = Buffer.from(head.slice(head.indexOf('\r\n\r\n') + 4), 'latin1');
      if (rest.length > 0) s.unshift(rest);
      resolve(s);
    };
    s.on('data', onData);
    s.write(['GET /inspect/ws HTTP/1.1', `Host: 127.0.0.1:${d.port}`, 'Upgrade: websocket', 'Connection: Upgrade',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13', '', ''].join('\r\n'));
  });
}

/**
 * Read the stalled socket; the close code of the close frame among its frames, or null when the
 * socket ends without one or goes quiet for 5 s without one (a daemon that never closed it).
 */
function closeCode(s: Socket): Promise<number | null> {
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    let quiet = setTimeout(() => { s.destroy(); resolve(null); }, 5000);
    const scan = (): number | null | undefined => {
      let at = 0;
      while (buf.length - at >= 2) {
        const opcode = buf[at] & 0x0f;
        let len = buf[at + 1] & 0x7f;
        let off = at + 2;
        if (len === 126) { if (buf.length < off + 2) return undefined; len = buf.readUInt16BE(off); off += 2; }
        else if (len === 127) { if (buf.length < off + 8) return undefined; len = Number(buf.readBigUInt64BE(off)); off += 8; }
        if (buf.length < off + len) return undefined;
        if (opcode === 0x8) return len >= 2 ? buf.readUInt16BE(off) : null;
        at = off + len;
      }
      buf = buf.subarray(at);
      return undefined;
    };
    s.on('data', (c: Buffer) => {
      clearTimeout(quiet);
      quiet = setTimeout(() => { s.destroy(); resolve(null); }, 5000);
      buf = Buffer.concat([buf, c]);
      const code = scan();
      if (code !== undefined) { clearTimeout(quiet); s.destroy(); resolve(code); }
    });
    s.on('close', () => { clearTimeout(quiet); resolve(null); });
    s.resume();
  });
}

describe('a WebSocket inspector client that never reads (behaviour.md §13.1)', () => {
  it('is closed with 1013 while a reading client stays; the daemon\'s memory returns', async () => {
    await commands(500);
    const before = rssMiB();
    const reader = await openInspector(d.port);
    const stalled = await stalledClient();
    await commands(3000);
    expect((await new LoomClient(d.base, 'leo').exec('final', '/info')).status).toBe(200);
    await reader.until((m) => m.type === 'command' && m.phase === 'finished' && m.topic === 'final', 'the final command');
    // The reading client got everything.
    const lastTicket = reader.messages.filter((m) => m.type === 'command' && m.phase === 'finished').length;
    expect(lastTicket).toBeGreaterThanOrEqual(3000);
    expect(reader.ws.readyState).toBe(reader.ws.OPEN);
    await reader.close();
    expect(await closeCode(stalled)).toBe(1013);
    await commands(200);
    // Generous: what a stalled client would hold unbounded is the megabytes of 3,000 commands' frames.
    expect(rssMiB() - before).toBeLessThan(40);
  }, 120000);
});
