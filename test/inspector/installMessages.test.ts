import { describe, expect, it } from '@jest/globals';
import { assign, createActor, setup, type InspectionEvent } from 'xstate';
import { InspectionSerialiser, type InspectorMessage } from '../../src/actors/inspectionMessages.js';

/**
 * The install machine comes with issue 14; the inspector's contract with it is the context field
 * names of behaviour.md §13.2 (installId, name, source, filesDone, filesTotal, bytes). A stand-in
 * machine with those fields, and one it must never show, checks the `install` messages of §13.3.
 */
const installLike = setup({
  types: { context: {} as { installId: string; name: string; source: string; filesDone: number; filesTotal: number; bytes: number; token: string; env: Record<string, string> } },
}).createMachine({
  id: 'install',
  context: { installId: 'ins_1', name: 'weather', source: 'gh:acme/weather', filesDone: 0, filesTotal: 3, bytes: 0, token: 'ghp_hidden', env: { API_KEY: 'k-hidden' } },
  initial: 'staging',
  states: {
    staging: {
      on: {
        file: { actions: assign({ filesDone: ({ context }) => context.filesDone + 1, bytes: ({ context }) => context.bytes + 100 }) },
        noop: {},
        done: 'installed',
      },
    },
    installed: { type: 'final' },
  },
});

describe('install progress messages (behaviour.md §13.3)', () => {
  it('when an install stages files, then each change of its public progress is one install message, and nothing else of its context', () => {
    const out: InspectorMessage[] = [];
    const serialiser = new InspectionSerialiser({ now: () => Date.parse('2026-01-01T00:00:00Z') });
    const actor = createActor(installLike, { systemId: 'install:ins_1', inspect: (ev: InspectionEvent) => out.push(...serialiser.fromInspection(ev)) } as never);
    actor.start();
    actor.send({ type: 'file' });
    actor.send({ type: 'noop' });
    actor.send({ type: 'file' });
    actor.send({ type: 'done' });
    const installs = out.filter((m) => m.type === 'install');
    expect(installs.map((m) => [m.state, m.files_done, m.bytes])).toEqual([['staging', 0, 0], ['staging', 1, 100], ['staging', 2, 200], ['installed', 2, 200]]);
    expect(installs[1]).toEqual({
      type: 'install', actor: 'install:ins_1', agent_id: null, state: 'staging', install_id: 'ins_1', name: 'weather', source: 'gh:acme/weather',
      files_done: 1, files_total: 3, bytes: 100, at: '2026-01-01T00:00:00.000Z',
    });
    expect(out.some((m) => m.type === 'transition' && m.from === 'staging' && m.to === 'installed')).toBe(true);
    expect(JSON.stringify(out)).not.toMatch(/hidden/);
  });
});
