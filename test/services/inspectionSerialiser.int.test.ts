import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { InspectorMessage } from '../../src/services/inspection.js';
import { hasSnapshotHook } from '../../src/adapters/xstateSnapshots.js';
import type { DaemonActor } from '../../src/actors/tree.js';
import { parseTopic } from '../../src/domain/topic.js';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { expectSameBytes, recordBothForms } from '../helpers/objectSerialiser.js';

/**
 * The serialiser writes the hot messages (transitions, commands) as JSON text from cached pieces
 * (behaviour.md §13.3): what the page receives must stay byte for byte what JSON.stringify made of
 * the object form, for every kind of message, and nothing of §13.4 may leak through it.
 */

let t: TestApp;
// Two may wait, for 150 ms: a slow first command makes queued, QUEUE_FULL and QUEUE_TIMEOUT.
beforeAll(async () => { t = await startApp({ queue: { max: 2, waitMs: 150 } }); });
afterAll(async () => { await t?.close(); });

describe('the text form of the live messages (behaviour.md §13.3)', () => {
  it('is XState\'s snapshot hook that the feed taps (an XState without it falls back to inspect, slower: revisit snapshotTap.ts)', () => {
    const root = (t.c.system as unknown as { tree: { root: DaemonActor } }).tree.root;
    expect(hasSnapshotHook(root.system)).toBe(true);
  });

  it('when a session queues, starts, finishes and refuses commands, moves actors and ends them, then every frame is the object form\'s JSON, byte for byte, and holds no secret', async () => {
    const rec = recordBothForms(t.c.system);
    const reg = await call(t.base, 'POST', '/agents', { body: { agent_id: 'form', webhook: true } });
    const minted = await call(t.base, 'POST', '/capabilities', { body: { agent_id: 'form', verbs: ['GET'], ttl_ms: 60000 } });
    const c = t.client('form');
    await c.exec('main', '/set $X = "s3cret-form"');
    await c.exec('main', '/set {v} = "sess-form-77"');
    // Escapes in every variable string: quotes, backslashes, non-ASCII, U+2028, a tab; the body never shown.
    await c.exec('main', '/exec echo "q\\"uote" \\\\ é \u2028 \t sess-form-77\nbody-form-88');
    // A slow command, then four more: two wait (and time out), two find the queue full; an MCP call is BUSY.
    const slow = c.exec('bash:q', '/exec sleep 0.4');
    await new Promise((r) => setTimeout(r, 50));
    const more = [1, 2, 3, 4].map((n) => c.exec('bash:q', `/exec echo ${n}`));
    const ref = parseTopic('bash:q');
    if (!ref) throw new Error('bash:q is a topic');
    const busy = new Promise<string>((resolve) => t.c.system.submit({ agentId: 'form', ref, cmd: '/help', requestId: null, via: 'mcp' }, (ev) => {
      if (ev.type === 'command.refused' || ev.type === 'command.finished') resolve(ev.type === 'command.refused' ? ev.reason : 'finished');
    }));
    expect(await busy).toBe('BUSY');
    await Promise.all([slow, ...more]);
    await c.exec('main', '/nosuch');
    await call(t.base, 'DELETE', `/capabilities/${minted.body.token_id}`);
    await call(t.base, 'DELETE', '/sessions/form/main');
    await call(t.base, 'DELETE', '/agents/form');
    await new Promise((r) => setTimeout(r, 50));
    const both = rec.stop();

    const kinds = expectSameBytes(both);
    for (const kind of ['actor:created', 'actor:stopped', 'transition:', 'command:queued', 'command:started', 'command:finished', 'command:refused:QUEUE_FULL', 'command:refused:QUEUE_TIMEOUT', 'command:refused:BUSY']) {
      expect(kinds).toContain(kind);
    }
    expect(both.frames.length).toBeGreaterThan(1);
    const text = both.frames.join('\n');
    const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
    for (const secret of [minted.body.secret, tokenOf(reg.body.webhook_url), 's3cret-form', 'sess-form-77', 'body-form-88']) expect(text).not.toContain(secret);
    const cmds = both.objects.filter((m): m is Extract<InspectorMessage, { type: 'command' }> => m.type === 'command' && m.phase === 'finished');
    expect(cmds.map((m) => m.cmd)).toContain('/exec echo "q\\"uote" \\\\ é \u2028 \t {v}');
  });
});
