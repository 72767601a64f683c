import { afterAll, describe, expect, it } from '@jest/globals';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openInspector } from '../inspector/support.js';
import { alive, Daemons, exec, mcpCall } from './support.js';

/**
 * behaviour.md §13.4 against the built daemon: an agent types secrets of every known shape where a
 * command, a request id, an identity header or a URL can carry them, through /exec and /mcp, and
 * cut at or across the 200-character display limit. The inspector (WebSocket and snapshot) and the
 * request log must hold none of them.
 */
const daemons = new Daemons();
const dirs: string[] = [];
afterAll(async () => {
  await daemons.killAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('secret shapes typed by an attacker', () => {
  it('never reach the inspector or the request log', async () => {
    const d = await daemons.start();
    dirs.push(d.dataDir);
    const reg = await (await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'eve', webhook: true }) })).json() as { webhook_url: string };
    const cap = await (await fetch(`${d.base}/capabilities`, { method: 'POST', body: JSON.stringify({ agent_id: 'eve', path_prefix: 'x', verbs: ['GET'], ttl_ms: 60000 }) })).json() as { secret: string };
    const secrets = [
      reg.webhook_url.split('/').pop() as string, cap.secret,
      'hostile-Bearer-Value-9f8e7d6c', `ghp_${'h0st1le'.repeat(6)}`, `gho_${'0auth'.repeat(8)}`, `github_pat_${'fine_Grained9'.repeat(6)}`,
    ];
    const [wh, caps, bearer, ghp, gho, pat] = secrets;
    const ws = await openInspector(d.port);
    const cmds = [
      `/exec curl -s -m 2 -X POST ${reg.webhook_url} -d x`,
      `/exec echo ${caps}`,
      `/exec echo "authorization:   bearer ${bearer}"`,
      `/open https://example.invalid/?t=${ghp}`,
      `/exec echo ${'p'.repeat(185)} ${gho}`,
      `/exec echo ${'p'.repeat(195)}${pat}`,
      `${pat} not even a command`,
      `/set $X = "${ghp}"`,
      `/help\n${caps}`,
    ];
    for (const cmd of cmds) await exec(d.base, 'eve', 'main', cmd);
    await mcpCall(d.base, 'eve', { topic: 'main', cmd: `/exec echo ${ghp} ${caps}` });
    // Secrets as a request id, an identity header and a URL path (the log records all three).
    await fetch(`${d.base}/exec`, { method: 'POST', headers: { 'X-Agent-Id': 'eve', 'Content-Type': 'application/json' }, body: JSON.stringify({ cmd: '/info', topic: 'main', request_id: caps }) });
    await fetch(`${d.base}/exec`, { method: 'POST', headers: { 'X-Agent-Id': ghp, 'Content-Type': 'application/json' }, body: JSON.stringify({ cmd: '/info', topic: 'main' }) });
    await fetch(`${d.base}/fs/${caps}/${ghp}`);
    await fetch(`${d.base}/webhook/${wh}x`, { method: 'POST', body: 'x' });
    await exec(d.base, 'eve', 'main', '/info');
    await ws.until((m) => m.type === 'command' && m.phase === 'finished' && m.cmd === '/info' && m.ticket !== undefined, 'the last /info');
    const state = await (await fetch(`${d.base}/inspect/state`)).text();
    await ws.close();
    expect(await alive(d)).toBe(true);
    await d.stop();
    const log = readFileSync(join(d.dataDir, 'logs', 'requests.log'), 'utf8');
    expect(log).toContain('"request_id":"caps_<secret>"');
    expect(log).toContain('"agent":"ghp_<secret>"');
    const found = (text: string) => secrets.filter((s) => text.includes(s) || text.includes(s.slice(-16)));
    expect({ ws: found(ws.raw.join('\n')), state: found(state), log: found(log) }).toEqual({ ws: [], state: [], log: [] });
  }, 60000);
});
