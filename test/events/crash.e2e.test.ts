import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';

/**
 * Crash safety of the inbox: writers post webhooks in a loop, the real daemon is killed
 * with SIGKILL at a random moment, restarted, and every event whose 202 was received must be in the
 * inbox exactly once with its text byte-identical. Repeated REPS times on one data directory, so
 * each restart also re-reads everything acknowledged before.
 */
const REPS = 10;
const WRITERS = 6;

let daemon: RunningDaemon | undefined;
afterAll(async () => { await daemon?.kill(); });

/** A unique text: id prefix, multi-byte and astral characters, several lines, random payload. */
function makeText(rep: number, w: number, i: number): string {
  return `crash ${rep}/${w}/${i} — Zürich ✓ 😀\n${randomBytes(randomInt(1, 600)).toString('base64')}\n  tail\ttab $(nope)`;
}

interface LogEvent { id: string; text: string; status: string }
function readLog(dataDir: string): LogEvent[] {
  const text = readFileSync(join(dataDir, 'agents', 'crash', 'state', 'events.jsonl'), 'utf8');
  return text.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { op: string; event: LogEvent }).event);
}

describe('inbox crash safety (SIGKILL during intake)', () => {
  it(`when the daemon is SIGKILLed at a random moment ${REPS} times, then every 202'd event is there exactly once, byte-identical`, async () => {
    const dataDir = tempDir();
    daemon = await startDaemon({ dataDir });
    const reg = await new LoomClient(daemon.base).registerAgent({ agent_id: 'crash', webhook: true });
    const path = new URL(String(reg.body.webhook_url)).pathname;
    const acked = new Map<string, string>();
    const sent = new Set<string>();
    const killedAfter: number[] = [];

    for (let rep = 0; rep < REPS; rep++) {
      if (rep > 0) daemon = await startDaemon({ dataDir });
      const d = daemon;
      let stop = false;
      const writers = Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          const text = makeText(rep, w, i);
          sent.add(text);
          try {
            const res = await fetch(d.base + path, { method: 'POST', body: text });
            const body = (await res.json()) as { event_id?: string };
            if (res.status !== 202 || !body.event_id) throw new Error(`unexpected ${res.status} ${JSON.stringify(body)}`);
            acked.set(body.event_id, text);
          } catch (err) {
            if (!stop) throw err;
            return; // the daemon died under this request: no 202, no promise made
          }
        }
      });
      // The random moment counts from the rep's first 202, so a slow (shared) machine still writes in every rep.
      const before = acked.size;
      for (let t = 0; acked.size === before && t < 200; t++) await new Promise((r) => setTimeout(r, 25));
      const wait = randomInt(30, 300);
      killedAfter.push(wait);
      await new Promise((r) => setTimeout(r, wait));
      stop = true;
      await d.kill();
      await Promise.all(writers);
    }

    // Restart once more and check everything acknowledged across all repetitions.
    daemon = await startDaemon({ dataDir });
    const events = readLog(dataDir);
    const byId = new Map<string, LogEvent[]>();
    for (const e of events) byId.set(e.id, [...(byId.get(e.id) ?? []), e]);
    expect(acked.size).toBeGreaterThan(REPS);
    for (const [id, text] of acked) {
      const found = byId.get(id) ?? [];
      expect(found.length).toBe(1);
      expect(Buffer.from(found[0].text, 'utf8').equals(Buffer.from(text, 'utf8'))).toBe(true);
    }
    // Nothing else: every stored text is one we sent, and none is stored twice.
    const texts = events.map((e) => e.text);
    expect(new Set(texts).size).toBe(texts.length);
    for (const t of texts) expect(sent.has(t)).toBe(true);

    // The same through the public surface for a sample: /events.read shows the text verbatim.
    const c = new LoomClient(daemon.base, 'crash');
    const ids = [...acked.keys()];
    for (let k = 0; k < 5; k++) {
      const id = ids[randomInt(0, ids.length)];
      const r = await c.exec('event', `/events.read ${id}`);
      expect(r.body?.split('\n').slice(6, 9).join('\n')).toBe(acked.get(id));
    }
    const list = await c.exec('event', '/events --all');
    expect(list.body?.split('\n')[0]).toBe(`Event inbox of crash — ${events.length} events (${events.length} pending, 0 acked; newest first)`);
    process.stdout.write(`crash test: ${REPS} SIGKILLs after ${killedAfter.join(', ')} ms; ${acked.size} events acknowledged with 202, all found once; ${events.length - acked.size} more stored without a 202 received\n`);
  }, 90000);
});
