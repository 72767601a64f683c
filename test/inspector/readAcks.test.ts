import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { ReadAcks } from '../../src/inspector/readAcks.js';

/** A stand-in WebSocket: records pings; the test answers them (or forges pongs). */
class Client extends EventEmitter {
  readyState = 1;
  pings: Buffer[] = [];
  ping(data: Buffer) { this.pings.push(data); }
}

describe('read acknowledgements of an inspector client (behaviour.md §13.1)', () => {
  it('counts sent bytes as unread until the pong of a ping sent after them comes', () => {
    const c = new Client();
    const acks = new ReadAcks(c);
    acks.sentBytes(100);
    expect(c.pings).toHaveLength(1);
    acks.sentBytes(50);
    // One ping out at a time.
    expect(c.pings).toHaveLength(1);
    expect(acks.unread).toBe(150);
    c.emit('pong', c.pings[0]);
    // The pong proves the first 100 read; the 50 sent since need their own ping, sent at once.
    expect(acks.unread).toBe(50);
    expect(c.pings).toHaveLength(2);
    c.emit('pong', c.pings[1]);
    expect(acks.unread).toBe(0);
    expect(c.pings).toHaveLength(2);
  });

  it('ignores pongs that do not answer the ping out: a client cannot claim reads it did not make', () => {
    const c = new Client();
    const acks = new ReadAcks(c);
    acks.sentBytes(2_000_000);
    for (const forged of [Buffer.alloc(0), Buffer.alloc(8), Buffer.from('0123456789abcdef', 'hex')]) c.emit('pong', forged);
    expect(acks.unread).toBe(2_000_000);
    expect(c.pings[0]).toHaveLength(8);
  });

  it('sends no ping to a socket that is no longer open', () => {
    const c = new Client();
    c.readyState = 2;
    const acks = new ReadAcks(c);
    acks.sentBytes(10);
    expect(c.pings).toEqual([]);
    expect(acks.unread).toBe(10);
  });
});
