import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';

/**
 * behaviour.md §14.2: secrets never enter a trace. A session that uses every kind of secret the
 * daemon knows — persistent /set values (one line, body lines, a fenced block, a typo), a value set
 * before the trace and echoed later, the webhook token, a capability secret — is recorded through
 * /exec and /mcp, and the trace file is searched for each secret.
 */
describe('a recorded session with secrets', () => {
  let app: TestApp;
  beforeAll(async () => { app = await startApp(); });
  afterAll(async () => { await app?.close(); });

  it('contains none of them, and keeps ${env:NAME} where they were', async () => {
    const reg = await app.client().registerAgent({ agent_id: 'leo', webhook: true });
    const webhookUrl = String(reg.body.webhook_url);
    const webhookToken = webhookUrl.split('/').pop() as string;
    const leo = app.client('leo');
    // Set before the trace starts; a later command echoes it.
    await leo.exec('main', '/set $OLD_KEY = "pre-existing-Secret-1"');
    const trace = (await call(app.base, 'POST', '/traces', { body: {} })).body.trace_id as string;
    const cap = (await call(app.base, 'POST', '/capabilities', { body: { agent_id: 'leo', path_prefix: 'docs', verbs: ['GET'], ttl_ms: 60000 } })).body;
    const secrets = {
      token: 'tok-Sekr3t-value-42', multi: 'second-Sekr3t', fenced: 'fenced line Sekr3t', app: 'app-scoped-Sekr3t',
      typo: 'typo-Sekr3t-unclosed', mcp: 'mcp-Sekr3t-value', old: 'pre-existing-Secret-1', webhook: webhookToken, cap: String(cap.secret),
    };
    expect(secrets.cap).toMatch(/^caps_/);
    const outs = [
      await leo.exec('main', `/set $TOKEN = "${secrets.token}"`, 'r1'),
      await leo.exec('main', `/set {city} = "Seoul"\n$MULTI = '${secrets.multi}'\n\`\`\`FENCED\n${secrets.fenced}\n\`\`\``),
      await leo.exec('app:weather', `/set $APIKEY = ${secrets.app}`),
      await leo.exec('main', `/set $TYPO = "${secrets.typo}`),
      await leo.exec('main', `/exec echo ${secrets.token} ${secrets.old} ${secrets.cap}`),
      await leo.exec('main', '/webhook'),
      await leo.exec('main', '/set'),
    ];
    expect(outs.every((o) => o.status === 200)).toBe(true);
    // The answers did carry secrets: the trace is where they must be gone.
    expect(outs[4].content).toContain(secrets.token);
    expect(outs[5].content).toContain(webhookToken);
    expect(outs[3].content).toContain(secrets.typo);
    await leo.mcpCall('main', `/set $VIA_MCP = "${secrets.mcp}"`);
    await leo.postWebhook(webhookUrl, `token is ${secrets.token}`);
    expect((await call(app.base, 'DELETE', `/traces/${trace}`)).status).toBe(200);

    const text = readFileSync(join(app.dataDir, 'traces', `${trace}.jsonl`), 'utf8');
    expect((await raw(app.port, { path: `/traces/${trace}` })).body).toBe(text);
    const found = Object.entries(secrets).filter(([, v]) => text.includes(v) || text.includes(JSON.stringify(v).slice(1, -1)));
    expect(found).toEqual([]);
    const steps = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const cmds = steps.filter((s) => s.kind === 'exec').map((s) => s.cmd);
    expect(cmds).toEqual([
      '/set $TOKEN = ${env:TOKEN}',
      '/set {city} = "Seoul"\n$MULTI = ${env:MULTI}\n$FENCED = ${env:FENCED}',
      '/set $APIKEY = ${env:APIKEY}',
      '/set $TYPO = ${env:TYPO}',
      '/exec echo ${env:TOKEN} ${env:OLD_KEY} caps_<secret>',
      '/webhook',
      '/set',
      '/set $VIA_MCP = ${env:VIA_MCP}',
    ]);
    // Where the answer echoes the command (the re: line), it is in the same form.
    const first = steps.find((s) => s.kind === 'exec');
    expect(first.expect.content).toBe('re: [r1] /set $TOKEN = ${env:TOKEN}\n$TOKEN set (global)');
    expect(steps.find((s) => s.kind === 'webhook').text).toBe('token is ${env:TOKEN}');
  });
});
