import { describe, expect, it } from '@jest/globals';
import { createActor, fromCallback, SimulatedClock } from 'xstate';
import { getAdjacencyMap } from 'xstate/graph';
import type { ShellRunOutcome } from '../../src/domain/shell.js';
import { INTERRUPT_GRACE_MS, SHELL_START_MS, lastRunId, shellMachine, type ProcessCommand, type ProcessInput, type ShellEvent } from '../../src/machines/shell.js';

const out = (s: string) => ({ output: Buffer.from(s), omitted: 0 });

/** A shell actor whose process is the test: it records what the machine tells the process and sends `proc.*` events itself. */
function harness() {
  const told: ProcessCommand[] = [];
  const lifecycle: string[] = [];
  const clock = new SimulatedClock();
  const machine = shellMachine.provide({
    actors: {
      process: fromCallback<ProcessCommand, ProcessInput>(({ receive, input }) => {
        lifecycle.push(`start ${input.cwd}`);
        receive((c) => told.push(c));
        return () => lifecycle.push('end');
      }),
    },
  });
  const actor = createActor(machine, { input: { agentId: 'leo', topic: 'bash:b', home: '/home/leo', env: {} }, clock });
  const results = new Map<string, ShellRunOutcome>();
  actor.on('shell.finished', (e) => { results.set(e.runId, e.outcome); });
  actor.start();
  return {
    actor, told, lifecycle, clock, results,
    proc: (e: ShellEvent) => actor.send(e),
    run: (text: string, timeoutMs = 120000) => { actor.send({ type: 'shell.run', text, timeoutMs }); return lastRunId(actor.getSnapshot().context); },
    state: () => actor.getSnapshot().value,
    ready: () => actor.send({ type: 'proc.ready', pid: 42, transport: 'pty', cwd: '/home/leo' }),
  };
}

describe('shell machine (behaviour.md §8.3)', () => {
  it('when the shell answers its first sentinel, then starting → ready with pid, transport and cwd; the process started in the home', () => {
    const h = harness();
    expect(h.state()).toBe('starting');
    expect(h.lifecycle).toEqual(['start /home/leo']);
    h.ready();
    expect(h.state()).toBe('ready');
    expect(h.actor.getSnapshot().context).toMatchObject({ pid: 42, transport: 'pty', cwd: '/home/leo' });
  });

  it('when a command arrives while starting, then it runs as soon as the shell is ready', () => {
    const h = harness();
    const id = h.run('echo hi');
    expect(h.told).toEqual([]);
    h.ready();
    expect(h.state()).toBe('running');
    expect(h.told).toEqual([{ type: 'proc.run', text: 'echo hi' }]);
    h.proc({ type: 'proc.done', exitCode: 0, cwd: '/tmp', ...out('hi\n') });
    expect(h.state()).toBe('ready');
    expect(h.results.get(id)).toEqual({ kind: 'done', exitCode: 0, cwd: '/tmp', ...out('hi\n') });
    expect(h.actor.getSnapshot().context).toMatchObject({ cwd: '/tmp', run: null, lastCommand: 'echo hi' });
  });

  it('when ready and a command arrives, then running; its sentinel gives status and cwd back to ready', () => {
    const h = harness();
    h.ready();
    const id = h.run('cd src && false\nsecond line');
    expect(h.state()).toBe('running');
    expect(h.actor.getSnapshot().context.lastCommand).toBe('cd src && false');
    h.proc({ type: 'proc.done', exitCode: 1, cwd: '/home/leo/src', ...out('') });
    expect(h.results.get(id)).toMatchObject({ kind: 'done', exitCode: 1, cwd: '/home/leo/src' });
    expect(h.state()).toBe('ready');
  });

  it('when the timeout passes, then interrupting (^C told); the recovery sentinel gives TIMEOUT with the kept output and ready', () => {
    const h = harness();
    h.ready();
    const id = h.run('sleep 1000', 3000);
    h.clock.increment(2999);
    expect(h.state()).toBe('running');
    h.clock.increment(1);
    expect(h.state()).toBe('interrupting');
    expect(h.told.map((c) => c.type)).toEqual(['proc.run', 'proc.interrupt']);
    h.proc({ type: 'proc.interrupting', ...out('before') });
    h.proc({ type: 'proc.interrupted', cwd: '/home/leo', ...out('before') });
    expect(h.state()).toBe('ready');
    expect(h.results.get(id)).toEqual({ kind: 'timeout', ended: false, cwd: '/home/leo', ...out('before') });
  });

  it('when the interrupted shell does not answer within 5 s, then the process is killed, ended, TIMEOUT with the output kept at the timeout', () => {
    const h = harness();
    h.ready();
    const id = h.run('trap "" INT; sleep 1000', 1000);
    h.clock.increment(1000);
    h.proc({ type: 'proc.interrupting', ...out('partial') });
    h.clock.increment(INTERRUPT_GRACE_MS - 1);
    expect(h.state()).toBe('interrupting');
    h.clock.increment(1);
    expect(h.state()).toBe('ended');
    expect(h.told.map((c) => c.type)).toEqual(['proc.run', 'proc.interrupt', 'proc.kill']);
    expect(h.results.get(id)).toEqual({ kind: 'timeout', ended: true, cwd: '/home/leo', ...out('partial') });
    expect(h.lifecycle).toEqual(['start /home/leo', 'end']);
    expect(h.actor.getSnapshot().status).toBe('done');
  });

  it('when the shell exits while interrupting, then ended with TIMEOUT', () => {
    const h = harness();
    h.ready();
    const id = h.run('x', 1000);
    h.clock.increment(1000);
    h.proc({ type: 'proc.exited', code: 130, startup: '', ...out('') });
    expect(h.state()).toBe('ended');
    expect(h.results.get(id)).toMatchObject({ kind: 'timeout', ended: true });
  });

  it('when the shell exits while a command runs (exit 3), then ended with the status, the last cwd and the output', () => {
    const h = harness();
    h.ready();
    h.run('cd /tmp');
    h.proc({ type: 'proc.done', exitCode: 0, cwd: '/tmp', ...out('') });
    const id = h.run('echo bye; exit 3');
    h.proc({ type: 'proc.exited', code: 3, startup: '', ...out('bye\n') });
    expect(h.results.get(id)).toEqual({ kind: 'ended', exitCode: 3, cwd: '/tmp', ...out('bye\n') });
    expect(h.state()).toBe('ended');
    expect(h.lifecycle).toEqual(['start /home/leo', 'end']);
  });

  it('when the shell dies while ready, then ended and nothing is answered', () => {
    const h = harness();
    h.ready();
    h.proc({ type: 'proc.exited', code: 137, startup: '', ...out('') });
    expect(h.state()).toBe('ended');
    expect(h.results.size).toBe(0);
  });

  it.each([
    ['exits while starting', (h: ReturnType<typeof harness>) => h.proc({ type: 'proc.exited', code: 1, startup: 'chdir(2) failed.\n', ...out('') }), 'the shell exited while starting (status 1): chdir(2) failed.'],
    ['cannot start', (h: ReturnType<typeof harness>) => h.proc({ type: 'proc.failed', message: 'cannot start a shell in /x: ENOENT' }), 'cannot start a shell in /x: ENOENT'],
    ['does not answer within the start limit', (h: ReturnType<typeof harness>) => h.clock.increment(SHELL_START_MS), 'the shell did not start within 10 s'],
  ])('when the shell %s, then ended and the waiting command fails with the reason', (_name, act, message) => {
    const h = harness();
    const id = h.run('echo hi');
    act(h);
    expect(h.state()).toBe('ended');
    expect(h.results.get(id)).toEqual({ kind: 'failed', message });
  });

  it.each(['starting', 'ready', 'running', 'interrupting'])('when closed in %s, then ended, the process ended, a running or waiting command answered closed', (state) => {
    const h = harness();
    let id: string | null = null;
    if (state === 'starting') id = h.run('waits');
    if (state !== 'starting') h.ready();
    if (state === 'running' || state === 'interrupting') id = h.run('sleep 5', 1000);
    if (state === 'interrupting') h.clock.increment(1000);
    expect(h.state()).toBe(state);
    h.actor.send({ type: 'shell.close' });
    expect(h.state()).toBe('ended');
    expect(h.lifecycle).toEqual(['start /home/leo', 'end']);
    if (id) expect(h.results.get(id)).toEqual({ kind: 'closed' });
  });

  it('when a second command arrives while one runs, then it is refused at once and the first goes on', () => {
    const h = harness();
    h.ready();
    const first = h.run('sleep 1');
    const second = h.run('echo no');
    expect(h.results.get(second)).toEqual({ kind: 'failed', message: 'the shell is busy with another command' });
    expect(h.state()).toBe('running');
    h.proc({ type: 'proc.done', exitCode: 0, cwd: '/home/leo', ...out('') });
    expect(h.results.get(first)).toMatchObject({ kind: 'done' });
  });

  it('when the process actor throws, then the shell ends and the command fails with the error', () => {
    const machine = shellMachine.provide({
      actors: { process: fromCallback<ProcessCommand, ProcessInput>(({ receive }) => { receive(() => { throw new Error('boom'); }); }) },
    });
    const actor = createActor(machine, { input: { agentId: 'a', topic: 'bash:b', home: '/h', env: {} } });
    const results: ShellRunOutcome[] = [];
    actor.on('shell.finished', (e) => { results.push(e.outcome); });
    actor.start();
    actor.send({ type: 'proc.ready', pid: 1, transport: 'pipe', cwd: '/h' });
    actor.send({ type: 'shell.run', text: 'x', timeoutMs: 1000 });
    expect(actor.getSnapshot().value).toBe('ended');
    expect(results).toEqual([{ kind: 'failed', message: 'boom' }]);
  });

  it('the machine graph has exactly the states and edges of the table', () => {
    const map = getAdjacencyMap(shellMachine as typeof shellMachine & never, {
      events: [
        { type: 'shell.run', text: 't', timeoutMs: 1 },
        { type: 'shell.close' },
        { type: 'proc.ready', pid: 1, transport: 'pty', cwd: '/' },
        { type: 'proc.done', exitCode: 0, cwd: '/', ...out('') },
        { type: 'proc.interrupted', cwd: '/', ...out('') },
        { type: 'proc.exited', code: 0, startup: '', ...out('') },
        { type: 'proc.failed', message: 'x' },
        // The delayed transitions, as XState names their events.
        { type: 'xstate.after.execTimeout.shell.running' },
        { type: 'xstate.after.interruptGrace.shell.interrupting' },
        { type: 'xstate.after.startLimit.shell.starting' },
      ],
      input: { agentId: 'a', topic: 'bash:b', home: '/h', env: {} },
      // `runs` counts every command taken and would make the graph infinite: a state is the rest.
      serializeState: (st: { value: unknown; context: { runs: number } }) => JSON.stringify([st.value, { ...st.context, runs: 0 }]),
    } as never);
    const edges = new Set<string>();
    for (const node of Object.values(map)) {
      for (const step of Object.values(node.transitions) as Array<{ event: { type: string }; state: { value: unknown } }>) {
        const from = String(node.state.value);
        const to = String(step.state.value);
        const type = step.event.type.replace(/^xstate\.after\.(\w+)\..*$/, 'after $1');
        if (from !== to) edges.add(`${from} -${type}-> ${to}`);
      }
    }
    expect([...edges].sort()).toEqual([
      'interrupting -after interruptGrace-> ended', 'interrupting -proc.exited-> ended', 'interrupting -proc.interrupted-> ready', 'interrupting -shell.close-> ended',
      'ready -proc.exited-> ended', 'ready -shell.close-> ended', 'ready -shell.run-> running',
      'running -after execTimeout-> interrupting', 'running -proc.done-> ready', 'running -proc.exited-> ended', 'running -shell.close-> ended',
      'starting -after startLimit-> ended', 'starting -proc.exited-> ended', 'starting -proc.failed-> ended', 'starting -proc.ready-> ready',
      'starting -proc.ready-> running', 'starting -shell.close-> ended',
    ].sort());
  });
});
