import { describe, expect, it } from '@jest/globals';
import { createActor, createMachine, type InspectionEvent } from 'xstate';
import { hasSnapshotHook, observeSnapshots, type InspectableSystem, type SnapshotEvent } from '../../src/adapters/xstateSnapshots.js';

const toggle = createMachine({ id: 'toggle', initial: 'off', states: { off: { on: { flip: 'on' } }, on: { on: { flip: 'off' } } } });
const started = () => createActor(toggle).start();
const hookOf = (a: ReturnType<typeof started>) => (a.system as unknown as { _sendInspectionEvent: unknown })._sendInspectionEvent;

describe('the snapshot tap of the inspector feed (snapshotTap.ts)', () => {
  it('passes on snapshot events only, to every listener, alongside ordinary inspect observers', () => {
    const actor = started();
    expect(hasSnapshotHook(actor.system)).toBe(true);
    const a: SnapshotEvent[] = [];
    const b: SnapshotEvent[] = [];
    const raw: InspectionEvent[] = [];
    const sub = actor.system.inspect((ev) => raw.push(ev));
    const offA = observeSnapshots(actor.system, (ev) => a.push(ev));
    const offB = observeSnapshots(actor.system, (ev) => b.push(ev));
    actor.send({ type: 'flip' });
    offB();
    actor.send({ type: 'flip' });
    expect(a.map((ev) => [ev.type, ev.event.type, (ev.snapshot as unknown as { value: string }).value])).toEqual([['@xstate.snapshot', 'flip', 'on'], ['@xstate.snapshot', 'flip', 'off']]);
    expect(b).toHaveLength(1);
    // The inspect observer still gets everything, as XState sends it.
    expect(raw.filter((ev) => ev.type === '@xstate.snapshot')).toHaveLength(2);
    expect(raw.some((ev) => ev.type === '@xstate.event')).toBe(true);
    offA();
    sub.unsubscribe();
  });

  it('when the last listener leaves, the system is exactly as XState made it (nothing runs while nobody watches)', () => {
    const actor = started();
    const original = hookOf(actor);
    const off1 = observeSnapshots(actor.system, () => {});
    const off2 = observeSnapshots(actor.system, () => {});
    expect(hookOf(actor)).not.toBe(original);
    off1();
    expect(hookOf(actor)).not.toBe(original);
    off2();
    expect(hookOf(actor)).toBe(original);
  });

  it('without the hook (another XState), falls back to an inspect observer: the same snapshot events', () => {
    const actor = started();
    const seen: string[] = [];
    let observer: ((ev: InspectionEvent) => void) | undefined;
    const fake = { inspect: (o: (ev: InspectionEvent) => void) => { observer = o; return { unsubscribe: () => { observer = undefined; } }; } } as unknown as InspectableSystem;
    expect(hasSnapshotHook(fake)).toBe(false);
    const off = observeSnapshots(fake, (ev) => seen.push(ev.event.type));
    observer?.({ type: '@xstate.event', event: { type: 'flip' } } as unknown as InspectionEvent);
    observer?.({ type: '@xstate.snapshot', event: { type: 'flip' }, actorRef: actor, snapshot: actor.getSnapshot(), rootId: 'x' } as unknown as InspectionEvent);
    off();
    expect(seen).toEqual(['flip']);
    expect(observer).toBeUndefined();
  });
});
