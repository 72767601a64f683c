import { describe, expect, it } from '@jest/globals';
import { columns, durationText, plural } from '../../src/domain/text.js';
import { describeValue } from '../../src/sfmd/jsonPath.js';

describe('behaviour.md §2.13 text helpers: plurals, human durations, aligned columns', () => {
  it.each([[0, '0 events'], [1, '1 event'], [2, '2 events']])('plural(%i) is %s', (n, text) => {
    expect(plural(n, 'event')).toBe(text);
  });

  it('when the plural is irregular, then it is given', () => {
    expect(plural(1, 'capability', 'capabilities')).toBe('1 capability');
    expect(plural(3, 'capability', 'capabilities')).toBe('3 capabilities');
  });

  it.each([[2592000000, '30d'], [3_600_000, '1h'], [90_000, '90s'], [900_000, '15m'], [1500, '1500ms'], [0, '0ms']])('durationText(%i) is %s (the notation --ttl accepts)', (ms, text) => {
    expect(durationText(ms)).toBe(text);
  });

  it('when rows differ in width, then every column but the last is padded to its longest value', () => {
    expect(columns([['a', 'long', 'x'], ['bbb', 's', 'y']])).toEqual(['  a    long  x', '  bbb  s     y']);
    expect(columns([['😀', 'z'], ['ab', 'z']], '')).toEqual(['😀   z', 'ab  z']);
  });

  it('when a template warning describes a one-element array, then it says 1 item', () => {
    expect(describeValue([1])).toBe('is an array of 1 item');
    expect(describeValue([])).toBe('is an array of 0 items');
  });
});
