import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';

/*
 * behaviour.md §14.2: a trace holds what a fresh machine needs to answer the same. A `bash:` topic
 * whose shell changed folder before the trace started gets that folder as a step of its own (as an
 * open document does), so a replay's shell runs the recorded commands where they ran.
 */
let d: RunningDaemon;
const env = () => ({ SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, LOOM_AGENT_ID: 'leo' });

beforeAll(async () => {
  d = await startDaemon();
  expect((await runCli(['agent', 'add', 'leo'], env())).code).toBe(0);
});
afterAll(async () => {
  await d?.stop();
});

describe('a trace of a bash topic whose shell is in another folder (behaviour.md §14.2)', () => {
  it('when the shell changed folder before recording, then the trace restores it first and replays with no difference', async () => {
    expect((await runCli(['bash:dev', '/exec', 'cd /tmp'], env())).code).toBe(0);
    const started = await runCli(['--json', 'trace', 'start', '--agent', 'leo'], env());
    const id = (JSON.parse(started.stdout) as { trace_id: string }).trace_id;
    const pwd = await runCli(['bash:dev', '/exec', 'pwd'], env());
    expect(pwd.stdout).toBe('exit: 0 | cwd: /tmp\n---\n/tmp\n');
    expect((await runCli(['trace', 'stop', id], env())).code).toBe(0);
    const file = join(tempDir('loom-trace-'), 'cwd.jsonl');
    expect((await runCli(['trace', 'get', id, '-o', file], env())).code).toBe(0);
    const steps = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { kind?: string; cmd?: string; expect?: unknown });
    const execs = steps.filter((s) => s.kind === 'exec');
    expect(execs.map((s) => s.cmd)).toEqual(["/exec cd '/tmp'", '/exec pwd']);
    expect(execs[0].expect).toBeUndefined();
    const replay = await runCli(['replay', file], { SVC_DATA_DIR: tempDir() }, 60_000);
    expect({ code: replay.code, out: replay.stdout }).toEqual({ code: 0, out: expect.stringContaining('1 matched, 0 differed') });
  });
});
