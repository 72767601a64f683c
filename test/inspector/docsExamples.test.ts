import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InspectorSnapshot, SnapshotTopic } from '../../src/client/index.js';
import { renderTop } from '../../src/cli/topView.js';

/**
 * The examples of docs/inspector.md and the README's `loom top` frame stay true: the lines shown are
 * what `loom top` draws from the JSON shown (behaviour.md §13.6–13.7).
 */
const doc = readFileSync(join(process.cwd(), 'docs', 'inspector.md'), 'utf8');
const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
const blocks = (text: string, lang: string) => [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);

const topic = (t: Partial<SnapshotTopic>): SnapshotTopic => ({ topic: 't', topic_type: 'tab', state: 'idle', running: null, waiting: [], shell: null, recent: [], ...t });
const frame = (topics: SnapshotTopic[]) => renderTop({ at: '', version: '0.1.0', uptime_ms: 1000, agents: [{ agent_id: 'leo', home: null, webhook: false, topics }] } as InspectorSnapshot, { width: 200, url: 'u', color: false });

describe('docs/inspector.md examples', () => {
  it('the loom top lines are what loom top draws from the topic JSON above them', () => {
    const json = JSON.parse(blocks(doc, 'json')[0]) as SnapshotTopic;
    const lines = frame([topic({ ...json, topic_type: 'tab' })]).map((l) => l.trimEnd());
    const shown = blocks(doc, 'text')[0].trimEnd().split('\n');
    // The JSON's times are a moment of its own: the durations shown are its elapsed and waited times.
    expect(lines.slice(-3)).toEqual(shown.slice(-3));
    expect(lines).toContain(shown[0]);
  });

  it('the history example has the fields of behaviour.md §13.7, names and never values', () => {
    const json = JSON.parse(blocks(doc, 'json')[1]) as { history: Array<Record<string, unknown>> };
    expect(Object.keys(json)).toEqual(['topic', 'history_since', 'history_truncated', 'history']);
    expect(json.history.map((e) => Object.keys(e))).toEqual([
      ['at', 'type', 'from', 'to', 'event'], ['at', 'type', 'from', 'to', 'event'], ['at', 'type', 'uri', 'title'], ['at', 'type', 'scope', 'names'],
    ]);
  });
});

describe('the README loom top frame', () => {
  it('shows the limits, places, request ids and refusal limits as loom top draws them', () => {
    const lines = frame([
      topic({ topic: 'batch', queue_limit: 5, wait_limit_ms: 120000, recent: [{ ticket: 't9', cmd: '/exec echo step-5', ok: false, code: 'QUEUE_FULL', duration_ms: 0, at: '', queue_limit: 5 }] }),
      topic({
        topic: 'build', state: 'executing', queue_limit: 5, wait_limit_ms: 120000,
        running: { ticket: 't1', cmd: '/exec sleep 40 # make test', via: 'exec', request_id: 'ci-17', elapsed_ms: 20200 },
        waiting: [
          { ticket: 't2', cmd: '/exec npm run lint', via: 'exec', request_id: 'ci-18', waited_ms: 18600, expires_in_ms: 101400, position: 1 },
          { ticket: 't3', cmd: '/info', via: 'exec', request_id: null, waited_ms: 16000, expires_in_ms: 103400, position: 2 },
        ],
      }),
    ]).map((l) => l.trimEnd());
    const shown = blocks(readme, 'text').find((b) => b.includes('waiting 2/5'))?.split('\n') ?? [];
    for (const line of lines.slice(-5)) expect(shown).toContain(line);
  });
});
