import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SimulatedClock } from 'xstate';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { addAgent, mint, send } from './helpers.js';

const T0 = Date.parse('2025-06-01T10:00:00.000Z');
const DAY = 86_400_000;
const PUBLIC_FIELDS = ['agent_id', 'created_at', 'expires_at', 'path_prefix', 'revoked_at', 'single_use', 'state', 'token_id', 'ttl_ms', 'used_at', 'verbs'];

let app: TestApp;
let clock: SimulatedClock;
let base: string;

beforeAll(async () => {
  clock = new SimulatedClock();
  clock.set(T0);
  app = await startApp({ clock });
  base = app.base;
  await addAgent(base, 'leo');
  await addAgent(base, 'mia');
});
afterAll(async () => { await app.close(); });

const fsGet = (path: string, secret: string) => send(app.port, { path: `/fs/${path}`, headers: { Authorization: `Bearer ${secret}` } });

describe('POST /capabilities', () => {
  it.each([
    [{}, 'agent_id required'],
    [{ agent_id: '' }, 'agent_id required'],
    [{ agent_id: null }, 'agent_id required'],
    [{ agent_id: '../x', verbs: ['GET'], ttl_ms: 1 }, 'Invalid agent_id: ../x'],
    [{ agent_id: '.', verbs: ['GET'], ttl_ms: 1 }, 'Invalid agent_id: .'],
  ])('when the body is %j, then 400 %s', async (body, error) => {
    const r = await call(base, 'POST', '/capabilities', { body });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error });
  });

  it('when the body is not JSON, then 400 Invalid JSON body', async () => {
    const r = await call(base, 'POST', '/capabilities', { body: '{nope' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid JSON body' });
  });

  it('when the agent is unknown, then 404 Unknown agent: <id> (before the spec is looked at)', async () => {
    const r = await call(base, 'POST', '/capabilities', { body: { agent_id: 'ghost', verbs: 'bad' } });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'Unknown agent: ghost' });
  });

  it('when X-Agent-Id differs from agent_id, then 403 (before the spec is looked at)', async () => {
    const r = await call(base, 'POST', '/capabilities', { body: { agent_id: 'leo', verbs: 'bad' }, headers: { 'X-Agent-Id': 'mia' } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'X-Agent-Id does not match agent_id' });
  });

  it.each([
    [{ ttl_ms: 1000 }, 'verbs must be a non-empty array'],
    [{ verbs: [], ttl_ms: 1000 }, 'verbs must be a non-empty array'],
    [{ verbs: 'GET', ttl_ms: 1000 }, 'verbs must be a non-empty array'],
    [{ verbs: ['GET', 'POST'], ttl_ms: 1000 }, 'verb not on the system plane: POST'],
    [{ verbs: ['HEAD'], ttl_ms: 1000 }, 'verb not on the system plane: HEAD'],
    [{ verbs: ['exec'], ttl_ms: 1000 }, 'verb not on the system plane: exec'],
    [{ verbs: [5], ttl_ms: 1000 }, 'verb not on the system plane: 5'],
    [{ verbs: ['bad'] }, 'verb not on the system plane: bad'],
    [{ verbs: ['GET'] }, 'ttl_ms must be an integer from 1 to 2592000000'],
    [{ verbs: ['GET'], ttl_ms: 0 }, 'ttl_ms must be an integer from 1 to 2592000000'],
    [{ verbs: ['GET'], ttl_ms: 2592000001 }, 'ttl_ms must be an integer from 1 to 2592000000'],
    [{ verbs: ['GET'], ttl_ms: 1.5 }, 'ttl_ms must be an integer from 1 to 2592000000'],
    [{ verbs: ['GET'], ttl_ms: '15m' }, 'ttl_ms must be an integer from 1 to 2592000000'],
    [{ verbs: ['GET'], ttl_ms: 1000, path_prefix: '../x' }, 'path_prefix can never be legal: ../x'],
    [{ verbs: ['GET'], ttl_ms: 1000, path_prefix: 'a/../../b' }, 'path_prefix can never be legal: a/../../b'],
    [{ verbs: ['GET'], ttl_ms: 1000, path_prefix: 'a//b' }, 'path_prefix can never be legal: a//b'],
    [{ verbs: ['GET'], ttl_ms: 1000, path_prefix: '///' }, 'path_prefix can never be legal: ///'],
    [{ verbs: ['GET'], ttl_ms: 1000, path_prefix: 'a\\b' }, 'path_prefix can never be legal: a\\b'],
    [{ verbs: ['GET'], ttl_ms: 1000, path_prefix: 'a\u0000b' }, 'path_prefix can never be legal: a\u0000b'],
    [{ verbs: ['GET'], ttl_ms: 1000, path_prefix: '.' }, 'path_prefix can never be legal: .'],
    [{ verbs: ['GET'], ttl_ms: 1000, path_prefix: 'x'.repeat(256) }, `path_prefix can never be legal: ${'x'.repeat(256)}`],
    [{ verbs: ['GET'], ttl_ms: 1000, path_prefix: 5 }, 'path_prefix can never be legal: 5'],
    [{ verbs: ['GET'], ttl_ms: 1000, single_use: 'yes' }, 'single_use must be a boolean'],
  ])('when the spec is %j, then 400 Invalid capability with message %s', async (spec, message) => {
    const r = await call(base, 'POST', '/capabilities', { body: { agent_id: 'leo', ...spec } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid capability', message });
  });

  it('when the spec is valid, then 201 with exactly the mint fields, defaults applied and the secret once', async () => {
    const r = await call(base, 'POST', '/capabilities', { body: { agent_id: 'leo', verbs: ['get', 'Put', 'GET'], ttl_ms: 60_000 }, headers: { 'X-Agent-Id': 'leo' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(['agent_id', 'expires_at', 'path_prefix', 'secret', 'single_use', 'token_id', 'ttl_ms', 'verbs']);
    expect(r.body).toMatchObject({ agent_id: 'leo', path_prefix: '', verbs: ['GET', 'PUT'], ttl_ms: 60_000, single_use: false, expires_at: new Date(clock.now() + 60_000).toISOString() });
    expect(r.body.token_id).toMatch(/^cap_[A-Za-z0-9_-]{16}$/);
    expect(r.body.secret).toMatch(/^caps_[A-Za-z0-9_-]{43}$/);
  });

  it.each([
    ['/docs/', 'docs'],
    ['docs/sub', 'docs/sub'],
    ['/', ''],
    ['', ''],
    ['%2e%2e', '%2e%2e'],
  ])('when path_prefix is %j, then it is stored as %j', async (raw, stored) => {
    const r = await mint(base, { agent_id: 'leo', verbs: ['GET'], ttl_ms: 1000, path_prefix: raw });
    expect(r.path_prefix).toBe(stored);
  });
});

describe('GET /capabilities', () => {
  it('when listing, then public records come oldest first with exactly the public fields and never a secret', async () => {
    const a = await mint(base, { agent_id: 'mia', verbs: ['GET'], ttl_ms: 5000 });
    clock.increment(1);
    const b = await mint(base, { agent_id: 'mia', verbs: ['STAT'], ttl_ms: 5000, single_use: true, path_prefix: 'x' });
    const r = await call(base, 'GET', '/capabilities?agent_id=mia');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['capabilities']);
    const ids = r.body.capabilities.map((c: { token_id: string }) => c.token_id);
    expect(ids).toEqual([a.token_id, b.token_id]);
    for (const c of r.body.capabilities) expect(Object.keys(c).sort()).toEqual(PUBLIC_FIELDS);
    expect(r.body.capabilities[1]).toMatchObject({ agent_id: 'mia', path_prefix: 'x', verbs: ['STAT'], ttl_ms: 5000, single_use: true, state: 'live', used_at: null, revoked_at: null });
    expect(JSON.stringify(r.body)).not.toContain(a.secret);
    expect(JSON.stringify(r.body)).not.toContain('caps_');
  });

  it('when X-Agent-Id is present without a query, then only that agent\'s records are listed', async () => {
    const r = await call(base, 'GET', '/capabilities', { headers: { 'X-Agent-Id': 'mia' } });
    expect(r.body.capabilities.length).toBeGreaterThan(0);
    expect(r.body.capabilities.every((c: { agent_id: string }) => c.agent_id === 'mia')).toBe(true);
  });

  it('when X-Agent-Id differs from the agent_id query, then 403', async () => {
    const r = await call(base, 'GET', '/capabilities?agent_id=leo', { headers: { 'X-Agent-Id': 'mia' } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'X-Agent-Id does not match agent_id' });
  });

  it('when no filter is given, then every agent\'s records are listed', async () => {
    const r = await call(base, 'GET', '/capabilities');
    const agents = new Set(r.body.capabilities.map((c: { agent_id: string }) => c.agent_id));
    expect([...agents].sort()).toEqual(['leo', 'mia']);
  });

  it('when a token dies, then it is listed with its state for 7 days and gone after', async () => {
    await addAgent(base, 'ttl');
    const used = await mint(base, { agent_id: 'ttl', verbs: ['GET'], ttl_ms: 10 * DAY, single_use: true });
    const revoked = await mint(base, { agent_id: 'ttl', verbs: ['GET'], ttl_ms: 10 * DAY });
    const expiring = await mint(base, { agent_id: 'ttl', verbs: ['GET'], ttl_ms: 1000 });
    const home = (await call(base, 'GET', '/agents')).body.agents.find((a: { id: string }) => a.id === 'ttl').home;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${home}/f`, 'x');
    expect((await fsGet('f', used.secret)).status).toBe(200);
    expect((await call(base, 'DELETE', `/capabilities/${revoked.token_id}`)).body).toEqual({ token_id: revoked.token_id, revoked: true });
    clock.increment(1000);
    const states = async () => Object.fromEntries((await call(base, 'GET', '/capabilities?agent_id=ttl')).body.capabilities.map((c: { token_id: string; state: string }) => [c.token_id, c.state]));
    expect(await states()).toEqual({ [used.token_id]: 'consumed', [revoked.token_id]: 'revoked', [expiring.token_id]: 'expired' });
    const list = (await call(base, 'GET', '/capabilities?agent_id=ttl')).body.capabilities;
    expect(list.find((c: { token_id: string }) => c.token_id === used.token_id).used_at).toBe(new Date(clock.now() - 1000).toISOString());
    expect(list.find((c: { token_id: string }) => c.token_id === revoked.token_id).revoked_at).toBe(new Date(clock.now() - 1000).toISOString());
    clock.increment(7 * DAY - 1000);
    expect(Object.keys(await states())).toHaveLength(3);
    clock.increment(1);
    expect(await states()).toEqual({ [expiring.token_id]: 'expired' });
    clock.increment(1000);
    expect(await states()).toEqual({});
  });
});

describe('DELETE /capabilities/{token_id}', () => {
  it('when a live token is revoked, then 200 revoked true, /fs refuses it at once with 401 revoked, and a second call says false', async () => {
    const c = await mint(base, { agent_id: 'leo', verbs: ['GET'], ttl_ms: 60_000 });
    const r = await call(base, 'DELETE', `/capabilities/${c.token_id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ token_id: c.token_id, revoked: true });
    const f = await fsGet('x', c.secret);
    expect(f.status).toBe(401);
    expect(f.json).toEqual({ error: 'Capability refused: revoked', reason: 'revoked' });
    expect((await call(base, 'DELETE', `/capabilities/${c.token_id}`)).body).toEqual({ token_id: c.token_id, revoked: false });
  });

  it('when the token is unknown, then 200 revoked false (never 404)', async () => {
    const r = await call(base, 'DELETE', '/capabilities/cap_AAAAAAAAAAAAAAAA');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ token_id: 'cap_AAAAAAAAAAAAAAAA', revoked: false });
  });

  it('when X-Agent-Id is not the owner, then 403 and the token stays live', async () => {
    const c = await mint(base, { agent_id: 'leo', verbs: ['GET'], ttl_ms: 60_000 });
    const r = await call(base, 'DELETE', `/capabilities/${c.token_id}`, { headers: { 'X-Agent-Id': 'mia' } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'X-Agent-Id does not match agent_id' });
    const owner = await call(base, 'DELETE', `/capabilities/${c.token_id}`, { headers: { 'X-Agent-Id': 'leo' } });
    expect(owner.body).toEqual({ token_id: c.token_id, revoked: true });
  });

  it('when another method is used on the path, then 405 with Allow', async () => {
    const r = await call(base, 'GET', '/capabilities/cap_x');
    expect(r.status).toBe(405);
    expect(r.body).toEqual({ error: 'Method not allowed: GET /capabilities/cap_x' });
    expect(r.headers.get('allow')).toBe('DELETE');
  });
});

describe('POST /agents capability pairing (spec §4.3 rule 2)', () => {
  it('when a valid capability spec is given, then the response carries it like a mint response and it works on /fs', async () => {
    const r = await call(base, 'POST', '/agents', { body: { agent_id: 'pair', capability: { path_prefix: 'inbox', verbs: ['put', 'get'], ttl_ms: 60_000 } } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ agent_id: 'pair', created: true });
    expect(Object.keys(r.body.capability).sort()).toEqual(['agent_id', 'expires_at', 'path_prefix', 'secret', 'single_use', 'token_id', 'ttl_ms', 'verbs']);
    expect(r.body.capability).toMatchObject({ agent_id: 'pair', path_prefix: 'inbox', verbs: ['PUT', 'GET'], single_use: false });
    const put = await send(app.port, { method: 'PUT', path: '/fs/inbox/a.txt', headers: { Authorization: `Bearer ${r.body.capability.secret}` }, body: 'hi' });
    expect(put.status).toBe(201);
  });

  it.each([
    [{ verbs: ['GET'] }, 'ttl_ms must be an integer from 1 to 2592000000'],
    [{ verbs: ['POST'], ttl_ms: 5 }, 'verb not on the system plane: POST'],
    [{ verbs: ['GET'], ttl_ms: 5, path_prefix: '../up' }, 'path_prefix can never be legal: ../up'],
    ['all', 'capability must be an object'],
    [[1], 'capability must be an object'],
  ])('when the capability spec is %j, then 400 Invalid capability and no agent is created', async (capability, message) => {
    const r = await call(base, 'POST', '/agents', { body: { agent_id: 'halfmade', capability } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid capability', message });
    const agents = (await call(base, 'GET', '/agents')).body.agents.map((a: { id: string }) => a.id);
    expect(agents).not.toContain('halfmade');
  });

  it('when an existing agent is updated with a bad capability, then nothing about the agent changes', async () => {
    const before = (await call(base, 'GET', '/agents')).body.agents.find((a: { id: string }) => a.id === 'leo');
    const r = await call(base, 'POST', '/agents', { body: { agent_id: 'leo', home: '/tmp/loom-should-not-exist-xyz', capability: { verbs: [] } } });
    expect(r.status).toBe(400);
    const after = (await call(base, 'GET', '/agents')).body.agents.find((a: { id: string }) => a.id === 'leo');
    expect(after).toEqual(before);
    const { existsSync } = await import('node:fs');
    expect(existsSync('/tmp/loom-should-not-exist-xyz')).toBe(false);
  });

  it('when capability is null, then it is ignored', async () => {
    const r = await call(base, 'POST', '/agents', { body: { agent_id: 'leo', capability: null } });
    expect(r.status).toBe(200);
    expect(r.body.capability).toBeUndefined();
  });
});

describe('DELETE /agents/{id} cascade (spec §3 last row, §4.3 rule 3)', () => {
  it('when an agent is deleted, then every live capability into its workspace is revoked and counted', async () => {
    await addAgent(base, 'gone');
    const a = await mint(base, { agent_id: 'gone', verbs: ['GET'], ttl_ms: 60_000 });
    const b = await mint(base, { agent_id: 'gone', verbs: ['PUT'], ttl_ms: 60_000, single_use: true });
    const dead = await mint(base, { agent_id: 'gone', verbs: ['PUT'], ttl_ms: 60_000 });
    await call(base, 'DELETE', `/capabilities/${dead.token_id}`);
    const other = await mint(base, { agent_id: 'leo', verbs: ['GET'], ttl_ms: 60_000 });
    const r = await call(base, 'DELETE', '/agents/gone');
    expect(r.body).toEqual({ agent_id: 'gone', deleted: true, revoked_capabilities: 2, disposed_sessions: 0 });
    for (const s of [a.secret, b.secret]) expect((await fsGet('x', s)).json).toEqual({ error: 'Capability refused: revoked', reason: 'revoked' });
    const list = (await call(base, 'GET', '/capabilities?agent_id=gone')).body.capabilities;
    expect(list.map((c: { state: string }) => c.state)).toEqual(['revoked', 'revoked', 'revoked']);
    expect((await fsGet('x', other.secret)).status).toBe(404);
  });

  it('when the agent does not exist, then revoked_capabilities is 0', async () => {
    expect((await call(base, 'DELETE', '/agents/nobody')).body).toEqual({ agent_id: 'nobody', deleted: false, revoked_capabilities: 0, disposed_sessions: 0 });
  });
});

describe('GET /describe and the agent hub', () => {
  it('when /describe is read, then fs and capability-tokens are advertised with fs.max_bytes (behaviour.md §9.3)', async () => {
    const r = await call(base, 'GET', '/describe');
    expect(r.body.capabilities.fs).toEqual({ verbs: ['PUT', 'GET', 'DELETE', 'STAT'] });
    expect(r.body.capabilities['capability-tokens']).toEqual({ max_ttl_ms: 2592000000 });
    expect(r.body.limits['fs.max_bytes']).toBe(10485760);
  });

  it('when the agent hub is opened, then it lists the live capabilities (behaviour.md §2.12)', async () => {
    await addAgent(base, 'hub');
    const c = await mint(base, { agent_id: 'hub', verbs: ['get', 'put'], ttl_ms: 60_000, path_prefix: 'notes' });
    const dead = await mint(base, { agent_id: 'hub', verbs: ['get'], ttl_ms: 60_000 });
    await call(base, 'DELETE', `/capabilities/${dead.token_id}`);
    const out = await app.client('hub').exec('agent', '/open');
    expect(out.body).toContain('Capabilities (1 live)');
    expect(out.body).toContain(`  ${c.token_id}  notes  GET,PUT  live  expires ${String(c.expires_at)}`);
    expect(out.body).not.toContain(dead.token_id);
  });
});
