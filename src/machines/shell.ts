import { assign, emit, enqueueActions, fromCallback, sendTo, setup, type ParameterizedObject } from 'xstate';
import type { ConfinePlan } from '../domain/sandbox.js';
import type { ShellOutput, ShellRunOutcome, ShellTransportKind } from '../domain/shell.js';

/**
 * The persistent shell of a `bash:<name>` topic (behaviour.md §8.3), one actor per shell process,
 * child of its topic (system id `shell:<agent>/<topic>`, §13.3). The spec shows no table; Loom's:
 *
 * | State        | Trigger                               | Next         | Also                                              |
 * | starting     | first sentinel                        | ready        | (running when a command waits)                    |
 * | starting     | shell exits, cannot start, 10 s pass  | ended        | the waiting command: INTERNAL_ERROR               |
 * | ready        | /exec                                 | running      | script sourced from a temp file, fresh sentinel   |
 * | running      | sentinel                              | ready        | result: status, cwd, output                       |
 * | running      | timeout (120 s or --timeout)          | interrupting | SIGINT to the group, then a fresh sentinel        |
 * | running      | shell exits (`exit`, a signal)        | ended        | result + `(shell ended; …)`                       |
 * | interrupting | sentinel                              | ready        | TIMEOUT with the output before the timeout        |
 * | interrupting | 5 s pass, or the shell exits          | ended        | process group killed; TIMEOUT                     |
 * | ready        | shell exits                           | ended        |                                                   |
 * | any but ended| close (/close, DELETE /sessions, agent deletion, shutdown) | ended | a running command: closed        |
 *
 * `ended` is final: the topic stops the actor, the process actor's clean-up ends the shell
 * (SIGHUP to the group, SIGKILL 2 s later), and the next /exec spawns a new shell. The machine does
 * no I/O: the invoked `process` actor (provided by src/actors) owns the process and reports the
 * `proc.*` events; results leave as the emitted `shell.finished`.
 */

/** behaviour.md §8.3: how long an interrupted command has to answer ^C. */
export const INTERRUPT_GRACE_MS = 5000;
/** How long a new shell has to answer its first sentinel (beyond spec). */
export const SHELL_START_MS = 10000;

/** System id of a topic's shell (behaviour.md §13.3). */
export const shellSystemId = (agentId: string, topic: string): string => `shell:${agentId}/${topic}`;
/** Child id of the shell under its topic. */
export const SHELL_CHILD_ID = 'shell';

export interface ShellInput {
  agentId: string;
  topic: string;
  home: string;
  /** The environment of behaviour.md §8.3 (one-shot environment plus TERM, PS1, …). */
  env: Record<string, string | undefined>;
  /** behaviour.md §15: the shell is confined by Landlock (a `workspace` agent). */
  confine?: ConfinePlan;
}

/** One command handed to the shell. */
export interface ShellRun {
  runId: string;
  text: string;
  timeoutMs: number;
}

export interface ShellContext extends ShellInput {
  pid: number | null;
  transport: ShellTransportKind | null;
  /** Absolute cwd the shell last reported (the home until then). */
  cwd: string;
  run: ShellRun | null;
  /** A command that arrived while the shell was starting. */
  pending: ShellRun | null;
  /** Output kept when the running command was interrupted. */
  kept: ShellOutput | null;
  lastCommand: string | null;
  /** Commands taken so far: the machine gives each its id (`r<n>`) as it takes it. */
  runs: number;
}

export type ShellEvent =
  | ({ type: 'shell.run' } & Omit<ShellRun, 'runId'>)
  | { type: 'shell.close' }
  | { type: 'proc.ready'; pid: number; transport: ShellTransportKind; cwd: string }
  | ({ type: 'proc.done'; exitCode: number; cwd: string } & ShellOutput)
  | ({ type: 'proc.interrupting' } & ShellOutput)
  | ({ type: 'proc.interrupted'; cwd: string } & ShellOutput)
  | ({ type: 'proc.exited'; code: number; startup: string } & ShellOutput)
  | { type: 'proc.failed'; message: string }
  // The process actor failed (a bug in it): XState's own event.
  | { type: 'xstate.error.actor.process'; error: unknown };

/** The input of the process actor: where and with what environment the shell starts. */
export interface ProcessInput {
  cwd: string;
  env: Record<string, string | undefined>;
  confine?: ConfinePlan;
}

/** What the machine tells its process actor. */
export type ProcessCommand = { type: 'proc.run'; text: string } | { type: 'proc.interrupt' } | { type: 'proc.kill' };

/** The one emitted event: a command's outcome. */
export interface ShellFinished {
  type: 'shell.finished';
  runId: string;
  outcome: ShellRunOutcome;
}

type Ctx = ShellContext;
const finished = (runId: string, outcome: ShellRunOutcome): ShellFinished => ({ type: 'shell.finished', runId, outcome });
/** The id of the command the machine took last (what a caller that sent `shell.run` reads back). */
export const lastRunId = (context: Pick<ShellContext, 'runs'>): string => `r${context.runs}`;
/** The command of a `shell.run` event, with the id the machine gives it. */
const take = (context: Ctx, event: ShellEvent): ShellRun => {
  const e = event as Extract<ShellEvent, { type: 'shell.run' }>;
  return { runId: lastRunId({ runs: context.runs + 1 }), text: e.text, timeoutMs: e.timeoutMs };
};
const firstLine = (text: string) => {
  const line = text.split('\n', 1)[0].trim();
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
};
const noOutput: ShellOutput = { output: Buffer.alloc(0), omitted: 0 };

const enqueueTyped = <P extends ParameterizedObject['params']>(
  collect: Parameters<typeof enqueueActions<Ctx, ShellEvent, P, ShellEvent, never, never, never, never, ShellFinished>>[0],
) => enqueueActions<Ctx, ShellEvent, P, ShellEvent, never, never, never, never, ShellFinished>(collect);

export const shellMachine = setup({
  types: {
    context: {} as ShellContext,
    events: {} as ShellEvent,
    input: {} as ShellInput,
    emitted: {} as ShellFinished,
  },
  actors: {
    /** The shell process (provided by src/actors): takes ProcessCommand events, sends `proc.*` back. */
    process: fromCallback<ProcessCommand, ProcessInput>(() => undefined),
  },
  delays: {
    execTimeout: ({ context }) => context.run?.timeoutMs ?? 0,
    interruptGrace: INTERRUPT_GRACE_MS,
    startLimit: SHELL_START_MS,
  },
  actions: {
    /** Answer whatever command is running or waiting with `outcome`. */
    answerAll: enqueueTyped<{ outcome: ShellRunOutcome }>(({ enqueue, context }, p) => {
      for (const r of [context.run, context.pending]) if (r) enqueue.emit(finished(r.runId, p.outcome));
      enqueue.assign({ run: null, pending: null, kept: null });
    }),
    /** A command arrived while one runs (the topic queue prevents it): refuse it. */
    refuseBusy: emit(({ context }) => finished(lastRunId({ runs: context.runs + 1 }), { kind: 'failed', message: 'the shell is busy with another command' })),
    /** Every `shell.run` taken counts, refused ones included (each has its id). */
    countRun: assign({ runs: ({ context }) => context.runs + 1 }),
  },
  guards: {
    hasPending: ({ context }) => context.pending !== null,
  },
}).createMachine({
  id: 'shell',
  context: ({ input }) => ({ ...input, pid: null, transport: null, cwd: input.home, run: null, pending: null, kept: null, lastCommand: null, runs: 0 }),
  invoke: { id: 'process', src: 'process', input: ({ context }) => ({ cwd: context.home, env: context.env, ...(context.confine ? { confine: context.confine } : {}) }) },
  initial: 'starting',
  on: {
    'shell.close': { target: '.ended', actions: { type: 'answerAll', params: { outcome: { kind: 'closed' } } } },
    'xstate.error.actor.process': {
      target: '.ended',
      actions: { type: 'answerAll', params: ({ event }) => ({ outcome: { kind: 'failed', message: event.error instanceof Error ? event.error.message : String(event.error) } }) },
    },
  },
  states: {
    starting: {
      on: {
        'shell.run': [
          { guard: 'hasPending', actions: ['refuseBusy', 'countRun'] },
          { actions: assign(({ context, event }) => ({ pending: take(context, event), runs: context.runs + 1 })) },
        ],
        'proc.ready': [
          {
            guard: 'hasPending',
            target: 'running',
            actions: assign(({ context, event }) => ({
              pid: event.pid, transport: event.transport, cwd: event.cwd || context.cwd,
              run: context.pending, pending: null, lastCommand: firstLine((context.pending as ShellRun).text),
            })),
          },
          { target: 'ready', actions: assign(({ context, event }) => ({ pid: event.pid, transport: event.transport, cwd: event.cwd || context.cwd })) },
        ],
        'proc.exited': {
          target: 'ended',
          actions: {
            type: 'answerAll',
            params: ({ event }) => ({ outcome: { kind: 'failed', message: `the shell exited while starting (status ${event.code})${event.startup.trim() ? `: ${event.startup.trim()}` : ''}` } }),
          },
        },
        'proc.failed': { target: 'ended', actions: { type: 'answerAll', params: ({ event }) => ({ outcome: { kind: 'failed', message: event.message } }) } },
      },
      after: {
        startLimit: { target: 'ended', actions: { type: 'answerAll', params: { outcome: { kind: 'failed', message: `the shell did not start within ${SHELL_START_MS / 1000} s` } } } },
      },
    },
    ready: {
      on: {
        'shell.run': {
          target: 'running',
          actions: assign(({ context, event }) => ({ run: take(context, event), runs: context.runs + 1, lastCommand: firstLine(event.text) })),
        },
        'proc.exited': 'ended',
      },
    },
    running: {
      entry: sendTo('process', ({ context }) => ({ type: 'proc.run' as const, text: (context.run as ShellRun).text })),
      on: {
        'shell.run': { actions: ['refuseBusy', 'countRun'] },
        'proc.done': {
          target: 'ready',
          actions: enqueueTyped(({ enqueue, context, event }) => {
            if (event.type !== 'proc.done') return;
            enqueue.emit(finished((context.run as ShellRun).runId, { kind: 'done', exitCode: event.exitCode, cwd: event.cwd, output: event.output, omitted: event.omitted }));
            enqueue.assign({ run: null, cwd: event.cwd || context.cwd });
          }),
        },
        'proc.exited': {
          target: 'ended',
          actions: {
            type: 'answerAll',
            params: ({ context, event }) => ({ outcome: { kind: 'ended', exitCode: event.code, cwd: context.cwd, output: event.output, omitted: event.omitted } }),
          },
        },
      },
      after: { execTimeout: 'interrupting' },
    },
    interrupting: {
      entry: sendTo('process', { type: 'proc.interrupt' }),
      on: {
        'shell.run': { actions: ['refuseBusy', 'countRun'] },
        'proc.interrupting': { actions: assign({ kept: ({ event }) => ({ output: event.output, omitted: event.omitted }) }) },
        'proc.interrupted': {
          target: 'ready',
          actions: enqueueTyped(({ enqueue, context, event }) => {
            if (event.type !== 'proc.interrupted') return;
            enqueue.emit(finished((context.run as ShellRun).runId, { kind: 'timeout', ended: false, cwd: event.cwd || context.cwd, output: event.output, omitted: event.omitted }));
            enqueue.assign({ run: null, kept: null, cwd: event.cwd || context.cwd });
          }),
        },
        'proc.exited': {
          target: 'ended',
          actions: { type: 'answerAll', params: ({ context }) => ({ outcome: { kind: 'timeout', ended: true, cwd: context.cwd, ...(context.kept ?? noOutput) } }) },
        },
      },
      after: {
        interruptGrace: {
          target: 'ended',
          actions: [
            sendTo('process', { type: 'proc.kill' }),
            { type: 'answerAll', params: ({ context }) => ({ outcome: { kind: 'timeout', ended: true, cwd: context.cwd, ...(context.kept ?? noOutput) } }) },
          ],
        },
      },
    },
    ended: { type: 'final' },
  },
});
