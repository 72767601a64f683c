import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { compileMasks, envMask, redactCommand, redactText } from '../../src/domain/redact.js';
import { maskShapes } from '../../src/domain/secretShapes.js';
import { renderTop } from '../../src/cli/topView.js';
import type { InspectorSnapshot } from '../../src/client/index.js';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { openInspector } from './support.js';

const GHP = `ghp_${'A1b2C3d4E5'.repeat(3)}xYz123`;
const GHO = `gho_${'Z9y8X7w6V5'.repeat(3)}abc456`;
const PAT = `github_pat_11ABCDEFG0${'q'.repeat(20)}_${'R'.repeat(59)}`;
const BEARER = 'eyJhbGciOiJIUzI1NiJ9.payload-Bearer-Secret.sig';
const WH = `wh_${'k'.repeat(43)}`;
const CAPS = `caps_${'Q7'.repeat(21)}x`;

describe('redaction by shape (behaviour.md §13.4, secretShapes.ts)', () => {
  it('masks every shape, keeping its kind visible', () => {
    expect(maskShapes(`a ${CAPS} b`)).toBe('a caps_<secret> b');
    expect(maskShapes(`curl -X POST http://127.0.0.1:3923/webhook/${WH}`)).toBe('curl -X POST http://127.0.0.1:3923/webhook/wh_<token>');
    expect(maskShapes('curl http://127.0.0.1:1/webhook/not-a-token-but-the-credential?x=1')).toBe('curl http://127.0.0.1:1/webhook/<token>?x=1');
    expect(maskShapes(`curl -H "Authorization: Bearer ${BEARER}" x`)).toBe('curl -H "Authorization: Bearer <secret>" x');
    expect(maskShapes(`-H 'authorization:token ${GHP}'`)).toBe("-H 'authorization:token <secret>'");
    expect(maskShapes(`${GHP} ${GHO} ${PAT}`)).toBe('ghp_<secret> gho_<secret> github_pat_<secret>');
  });

  it('leaves ordinary text alone and is idempotent', () => {
    for (const t of ['/open ~/a.md', 'the wh_ prefix', 'caps_short', '/webhook', 'Authorization is needed', 'ghp_ is a prefix']) expect(maskShapes(t)).toBe(t);
    const once = maskShapes(`${CAPS} /webhook/${WH} Authorization: Bearer ${BEARER} ${GHP} ${PAT}`);
    expect(maskShapes(once)).toBe(once);
  });

  it('redactText masks known values after shapes; a value holding a shape leaves nothing of itself', () => {
    const masks = compileMasks([['prefix-' + GHP, envMask('TOKEN')], ['plain-secret-1', envMask('P')]]);
    expect(redactText(`echo prefix-${GHP} plain-secret-1 ${GHO}`, masks)).toBe('echo ${env:TOKEN} ${env:P} gho_<secret>');
    // A value that is only a shape is not turned into the mask of every other token of that shape.
    const only = compileMasks([[GHP, envMask('GH')]]);
    expect(redactText(`echo ${GHP} ${GHO}`, only)).toBe('echo ghp_<secret> gho_<secret>');
  });

  it('redactCommand masks a secret whole even where the line is cut before its end', () => {
    const out = redactCommand(`/exec echo ${'x'.repeat(190)} ${CAPS}`);
    expect(out).not.toContain('Q7Q7');
    expect(redactCommand(`/exec echo ${'y'.repeat(2_000_000)}${CAPS}`)).not.toContain('Q7Q7');
  });

  it('loom top shows no secret even if a snapshot carried one', () => {
    const snap = { version: 'x', uptime_ms: 1, agents: [{ agent_id: 'leo', home: '/h', webhook: true, capabilities: [], installs: [],
      topics: [{ topic: 'main', topic_type: 'tab', state: 'executing', waiting: [], recent: [], shell: null,
        running: { ticket: 't1', cmd: `/exec echo ${CAPS} ${GHP}`, via: 'exec', elapsed_ms: 3 } }] }] } as unknown as InspectorSnapshot;
    const text = renderTop(snap, { width: 400, url: 'u', color: false }).join('\n');
    expect(text).toContain('/exec echo caps_<secret> ghp_<secret>');
    expect(text).not.toContain(CAPS);
  });
});

/**
 * A session typing every shape into commands: the inspector (snapshot and WebSocket), a trace and
 * the request log must hold none of them.
 */
describe('secrets typed into commands stay out of the inspector, traces and the request log', () => {
  let app: TestApp;
  let closed = false;
  beforeAll(async () => { app = await startApp(); });
  afterAll(async () => {
    if (!closed) await app?.close();
    if (app) rmSync(app.dataDir, { recursive: true, force: true });
  });

  it('holds none of the shapes anywhere', async () => {
    const reg = await app.client().registerAgent({ agent_id: 'leo', webhook: true });
    const webhookUrl = String(reg.body.webhook_url);
    const webhookToken = webhookUrl.split('/').pop() as string;
    const cap = (await call(app.base, 'POST', '/capabilities', { body: { agent_id: 'leo', path_prefix: 'docs', verbs: ['GET'], ttl_ms: 60000 } })).body;
    const capSecret = String(cap.secret);
    expect(capSecret).toMatch(/^caps_/);
    const ws = await openInspector(app.port);
    const trace = (await call(app.base, 'POST', '/traces', { body: {} })).body.trace_id as string;
    const leo = app.client('leo');
    const cmds = [
      `/exec curl -s -X POST ${webhookUrl} -d hi`,
      `/exec echo ${capSecret}`,
      `/exec echo 'Authorization: Bearer ${BEARER}'`,
      `/exec echo ${GHP} ${GHO}`,
      `/exec echo ${PAT}`,
    ];
    for (const [i, cmd] of cmds.entries()) expect((await leo.exec('main', cmd, `r${i}`)).status).toBe(200);
    // A secret sent as the request id reaches the log's request_id field unless redacted.
    expect((await leo.exec('main', '/info', GHP)).status).toBe(200);
    await ws.until((m) => m.type === 'command' && m.phase === 'finished' && m.cmd === '/info', 'last command');
    const state = await call(app.base, 'GET', '/inspect/state');
    expect(state.status).toBe(200);
    await ws.close();
    expect((await call(app.base, 'DELETE', `/traces/${trace}`)).status).toBe(200);
    const secrets = { webhookToken, capSecret, BEARER, GHP, GHO, PAT };

    const stateText = JSON.stringify(state.body);
    const recent = state.body.agents.find((a: { agent_id: string }) => a.agent_id === 'leo').topics.find((t: { topic: string }) => t.topic === 'main').recent.map((r: { cmd: string }) => r.cmd);
    expect(recent).toEqual(expect.arrayContaining([
      expect.stringMatching(/\/webhook\/wh_<token> -d hi$/), '/exec echo caps_<secret>', "/exec echo 'Authorization: Bearer <secret>'",
      '/exec echo ghp_<secret> gho_<secret>', '/exec echo github_pat_<secret>',
    ]));
    const wsText = ws.raw.join('\n');
    expect(ws.messages.filter((m) => m.type === 'command').length).toBeGreaterThanOrEqual(cmds.length * 2);
    const traceText = readFileSync(join(app.dataDir, 'traces', `${trace}.jsonl`), 'utf8');
    await app.close();
    closed = true;
    const logFile = join(app.dataDir, 'logs', 'requests.log');
    for (let i = 0; i < 50 && !(existsSync(logFile) && readFileSync(logFile, 'utf8').includes('/inspect/state')); i++) await new Promise((r) => setTimeout(r, 10));
    const logText = readFileSync(logFile, 'utf8');
    expect(logText).toContain('"request_id":"ghp_<secret>"');
    for (const [where, text] of Object.entries({ stateText, wsText, traceText, logText })) {
      expect([where, Object.entries(secrets).filter(([, v]) => text.includes(v)).map(([k]) => k)]).toEqual([where, []]);
    }
  });
});
