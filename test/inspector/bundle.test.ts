import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomError } from '../../src/domain/errors.js';
import { INSPECTOR_FILE_MAX_BYTES } from '../../src/domain/limits.js';
import { bundleFileName, checkBundle, inspectorBundle } from '../../src/inspector/bundle.js';
import { bundleSource, readRecordedFile, recordedSource } from '../../src/inspector/recordedFile.js';
import type { InspectionSnapshot } from '../../src/services/inspectionSnapshot.js';
import { tempDir } from '../helpers/temp.js';

/** behaviour.md §13.8: the bundle's shape, and what `loom inspect <file>` accepts and refuses. */
const dir = tempDir('loom-bundle-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const snapshot: InspectionSnapshot = { at: '2026-01-05T10:00:01.500Z', version: '0.1.0', uptime_ms: 12, agents: [{ agent_id: 'leo', home: '/h', installs: [], topics: [] }] };
const machines = { topicQueue: { id: 'topicQueue', initial: 'idle', states: [], transitions: [] } };
const bundle = inspectorBundle(snapshot, machines);
const file = (name: string, text: string | Buffer) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const refusal = async (p: Promise<unknown>) => p.then(() => 'accepted', (err: unknown) => (err instanceof LoomError ? err.message : `not a LoomError: ${String(err)}`));

describe('the bundle (GET /inspect/export)', () => {
  it('is the format, version, times, the snapshot and the catalogue, in that order', () => {
    expect(bundle).toEqual({ format: 'loom-inspector-bundle', version: 1, exported_at: snapshot.at, loom_version: '0.1.0', state: snapshot, machines });
    expect(Object.keys(bundle)).toEqual(['format', 'version', 'exported_at', 'loom_version', 'state', 'machines']);
    expect(checkBundle(JSON.parse(JSON.stringify(bundle)))).toEqual(bundle);
  });

  it('is offered for download under a name with its time and no colon', () => {
    expect(bundleFileName('2026-01-05T10:00:01.500Z')).toBe('loom-inspector-2026-01-05T10-00-01Z.json');
  });

  it.each([
    ['a list', [], 'not a loom-inspector-bundle'],
    ['another format', { ...bundle, format: 'loom-trace' }, 'not a loom-inspector-bundle'],
    ['a later version', { ...bundle, version: 2 }, 'loom-inspector-bundle version 2 is not supported (this Loom reads version 1)'],
    ['no snapshot time', { ...bundle, state: { ...snapshot, at: 'yesterday' } }, 'loom-inspector-bundle: "state" is not an inspector snapshot (needs "at" and "agents")'],
    ['an agent without topics', { ...bundle, state: { ...snapshot, agents: [{ agent_id: 'leo' }] } }, 'loom-inspector-bundle: an agent of "state" has no "agent_id" or "topics"'],
    ['no machines', { ...bundle, machines: null }, 'loom-inspector-bundle: "machines" is not a machine catalogue'],
    ['no export time', { ...bundle, exported_at: 7 }, 'loom-inspector-bundle: "exported_at" is not a time'],
  ])('when it is %s, then it is refused naming why', (_what, value, message) => {
    expect(() => checkBundle(value)).toThrow(new LoomError(400, message));
  });
});

describe('a file for loom inspect <file>', () => {
  it('when it is a bundle, then its snapshot, machines and itself are served by path, recorded at its export time', async () => {
    const src = await recordedSource(file('night.json', JSON.stringify(bundle)));
    expect({ ...src, json: [...src.json.keys()] }).toEqual({
      kind: 'bundle', recordedAt: snapshot.at, loomVersion: '0.1.0', page: '/inspect', json: ['/inspect/state', '/inspect/machines', '/inspect/export'],
    });
    expect(src.json.get('/inspect/state')).toEqual(snapshot);
    expect(src.json.get('/inspect/machines')).toEqual(machines);
  });

  it('when it is malformed JSON, then one line says so without quoting the file', () => {
    expect(() => bundleSource('{"format": "loom-inspector-bundle",\n"secret-ish": ', 'x.json')).toThrow(new LoomError(400, 'x.json: not a loom-inspector-bundle (malformed JSON)'));
  });

  it('when it is a trace, then its steps are served for the step mode, and a damaged one is refused with the stepper\'s reason', async () => {
    const good = file('ok.jsonl', '{"loom_trace":2,"created_at":"2026-01-05T10:00:00.000Z","loom_version":"0.1.0"}\n{"seq":1,"t_ms":0,"kind":"agent","agent_id":"leo"}\n{"seq":2,"t_ms":1,"kind":"exec","via":"exec","agent_id":"leo","topic":"main","cmd":"/help","expect":{"status":200,"head":{"ok":true,"code":null,"topic":"main","topic_type":"tab","meta":null},"content":"x"},"duration_ms":2}\n');
    const src = await recordedSource(good);
    expect(src).toMatchObject({ kind: 'trace', page: '/inspect?trace=file', loomVersion: '0.1.0', recordedAt: '2026-01-05T10:00:00.000Z' });
    expect(src.json.get('/inspect/trace/file')).toMatchObject({ format: 'loom-inspector-steps', trace_format: 2 });
    expect(Object.keys(src.json.get('/inspect/machines') as object)).toContain('topicQueue');
    const p = file('t.jsonl', '{"loom_trace":1,"created_at":"2026-01-05T10:00:00.000Z"}\n{"seq":1,"kind":"exec"}\n');
    expect(await refusal(recordedSource(p))).toMatch(new RegExp(`^${p}: .*line 2`));
  });

  it('when it is a directory, missing, not UTF-8 or too large, then it is refused with what it is', async () => {
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    expect(await refusal(readRecordedFile(folder))).toBe(`${folder}: is a directory, not a file`);
    expect(await refusal(readRecordedFile(join(dir, 'none.json')))).toBe(`${join(dir, 'none.json')}: no such file`);
    const binary = file('bin.json', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect(await refusal(readRecordedFile(binary))).toBe(`${binary}: is not UTF-8 text`);
    // A sparse file: one byte past the limit costs no disk.
    const big = file('big.json', '');
    truncateSync(big, INSPECTOR_FILE_MAX_BYTES + 1);
    expect(await refusal(readRecordedFile(big))).toBe(`${big}: is ${INSPECTOR_FILE_MAX_BYTES + 1} bytes, more than the ${INSPECTOR_FILE_MAX_BYTES} bytes loom inspect opens`);
  });
});
