import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomError } from '../../src/domain/errors.js';
import { inspectorBundle } from '../../src/inspector/bundle.js';
import { openRecordedFile, type OfflineInspector } from '../../src/inspector/offline.js';
import { readRecordedFile } from '../../src/inspector/recordedFile.js';
import type { InspectionSnapshot } from '../../src/services/inspectionSnapshot.js';
import { tempDir } from '../helpers/temp.js';
import { rawUpgrade } from './support.js';

/**
 * behaviour.md §13.8: the offline server of `loom inspect <file>` answers the page with the shapes a
 * daemon sends, read-only, on loopback, behind the daemon's Host/Origin guard (§9.2).
 */
const dir = tempDir('loom-offline-');
const snapshot: InspectionSnapshot = { at: '2026-01-05T10:00:01.500Z', version: '0.1.0', uptime_ms: 12, agents: [{ agent_id: 'leo', home: '/h', installs: [], topics: [] }] };
const machines = { topicQueue: { id: 'topicQueue', initial: 'idle', states: [], transitions: [] } };
const path = join(dir, 'night.json');
let served: OfflineInspector;
let base: string;

beforeAll(async () => {
  writeFileSync(path, JSON.stringify(inspectorBundle(snapshot, machines)));
  served = await openRecordedFile(path);
  base = served.url.replace(/\/inspect$/, '');
});
afterAll(async () => {
  await served?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A raw GET with the headers given (fetch would set its own Host and refuse to send some). */
function get(p: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${p}`, { method, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the offline inspector of a bundle', () => {
  it('listens on 127.0.0.1 and serves the page, its assets, and the snapshot and machines as the daemon shapes them', async () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/inspect$/);
    const page = await fetch(served.url);
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(await page.text()).toContain('/inspect/assets/app.js');
    expect((await fetch(`${base}/inspect/assets/vendor/dagre.js`)).status).toBe(200);
    expect(await (await fetch(`${base}/inspect/state`)).json()).toEqual(snapshot);
    expect(await (await fetch(`${base}/inspect/machines`)).json()).toEqual(machines);
    expect(await (await fetch(`${base}/describe`)).json()).toEqual({ name: 'loom', version: '0.1.0', recorded: { at: snapshot.at, kind: 'bundle', file: 'night.json' } });
    const root = await fetch(`${base}/`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([302, '/inspect']);
  });

  it('refuses a foreign Host or Origin as the daemon does, and anything but GET', async () => {
    expect(await get('/inspect/state', { Host: 'evil.example' })).toEqual({ status: 403, body: '{"error":"Forbidden host: evil.example"}' });
    expect(await get('/inspect/state', { Origin: 'http://evil.example' })).toEqual({ status: 403, body: '{"error":"Forbidden origin: http://evil.example"}' });
    expect(await get('/inspect/state', {}, 'POST')).toEqual({ status: 405, body: '{"error":"Method not allowed: POST /inspect/state","message":"this inspector is read-only"}' });
    expect(await get('/inspect/../../etc/passwd', {})).toMatchObject({ status: 404 });
    expect(await get('/inspect/assets/../offline.ts', {})).toMatchObject({ status: 404 });
  });

  it('has no WebSocket: an upgrade passes the guard and gets 404; a foreign origin gets 403', async () => {
    const port = Number(new URL(base).port);
    expect(await rawUpgrade(port, { Host: `127.0.0.1:${port}` })).toMatch(/^HTTP\/1\.1 404 /);
    expect(await rawUpgrade(port, { Host: `127.0.0.1:${port}`, Origin: 'http://evil.example' })).toMatch(/^HTTP\/1\.1 403 [\s\S]*Forbidden origin/);
  });
});

describe('a FIFO given as the file', () => {
  it('is refused at once, never waiting for a writer', async () => {
    const fifo = join(dir, 'pipe.json');
    execFileSync('mkfifo', [fifo]);
    const err = await readRecordedFile(fifo).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(LoomError);
    expect((err as LoomError).message).toBe(`${fifo}: is a FIFO, not a file`);
  });
});
