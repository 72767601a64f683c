import { describe, expect, it } from '@jest/globals';
import { escapeControls, terminalJson } from '../../src/domain/text.js';
import type { TraceStep } from '../../src/domain/trace.js';
import { stepJson, stepText } from '../../src/replay/report.js';
import type { StepResult } from '../../src/replay/run.js';

/*
 * loom replay's output (behaviour.md §14.3) prints what a trace file says: a hostile trace must not be
 * able to drive the terminal (retitle it, clear it) through its agent ids, topics, commands, paths or
 * expected contents.
 */

const OSC = '\u001b]0;pwned\u0007';
const CLEAR = '\u001b[2J';
const CSI = '\u009b2J';

const result = (step: TraceStep, extra: Partial<StepResult> = {}): StepResult => ({ step, agentId: 'agent_id' in step ? step.agent_id : '', verdict: 'not_compared', ms: 1, ...extra });
const hasControls = (s: string) => /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(s);

describe('loom replay output shows control characters escaped (behaviour.md §14.3)', () => {
  it('escapeControls: C0, DEL and C1 as \\xNN; other text and backslashes as they are', () => {
    expect(escapeControls(`a${OSC}b${CLEAR}\r\n\t\u007f${CSI} é ✓ \\x`)).toBe('a\\x1b]0;pwned\\x07b\\x1b[2J\\x0d\\x0a\\x09\\x7f\\x9b2J é ✓ \\x');
  });

  it('the step line: topic, command and file path', () => {
    const exec = stepText(result({ seq: 1, kind: 'exec', via: 'exec', agent_id: 'leo', topic: `main${OSC}`, cmd: `/exec echo ${CLEAR}${CSI}` }), false);
    expect(exec).toBe('· 1 main\\x1b]0;pwned\\x07 /exec echo \\x1b[2J\\x9b2J');
    const file = stepText(result({ seq: 2, kind: 'file', agent_id: 'leo', path: `~/a${CLEAR}.md`, content: '' }), true);
    expect(file).toBe('· 2 file leo ~/a\\x1b[2J.md');
    const hook = stepText(result({ seq: 3, kind: 'webhook', agent_id: 'leo', text: `done${CSI}` }), false);
    expect(hook).toBe('· 3 webhook leo "done\\x9b2J"');
  });

  it('the reason a step was not sent and every line of a diff, whose own line breaks stay', () => {
    const step: TraceStep = { seq: 4, kind: 'exec', via: 'exec', agent_id: 'leo', topic: 'main', cmd: '/info' };
    const text = stepText(result(step, {
      verdict: 'failed', message: `file step ~/x${OSC}: refusing`, diff: `--- expected (step 4)\n+++ actual (step 4)\n@@ -1 +1 @@\n-${CLEAR}gone\r\n+here`,
    }), false);
    expect(hasControls(text)).toBe(false);
    expect(text.split('\n')).toEqual([
      '✗ 4 main /info', '  not sent: file step ~/x\\x1b]0;pwned\\x07: refusing',
      '--- expected (step 4)', '+++ actual (step 4)', '@@ -1 +1 @@', '-\\x1b[2Jgone\\x0d', '+here',
    ]);
  });

  it('--json stays JSON of the same values, with no raw C1 control left in the line', () => {
    const step: TraceStep = { seq: 5, kind: 'exec', via: 'exec', agent_id: 'leo', topic: `t${CSI}`, cmd: `/exec ${OSC}` };
    const line = terminalJson(stepJson(result(step)));
    expect(hasControls(line)).toBe(false);
    expect(JSON.parse(line)).toMatchObject({ topic: `t${CSI}`, cmd: `/exec ${OSC}` });
  });
});
