import { describe, expect, it } from '@jest/globals';
import { confirm, content, joinLines } from '../../src/domain/result.js';

describe('joinLines (behaviour.md §1.5: `\\n`, no `\\r`, trailing blank lines removed)', () => {
  it('joins with LF and keeps blank lines inside the text', () => {
    expect(joinLines(['a', '', 'b'])).toBe('a\n\nb');
  });

  it('removes every CR, also inside a line and in lines that hold several', () => {
    expect(joinLines(['a\r', 'b\r\nc', 'd\re'])).toBe('a\nb\nc\nde');
  });

  it('cuts trailing lines that are empty or only whitespace, including those inside the last element', () => {
    expect(joinLines(['a', ' ', '\t', ''])).toBe('a');
    expect(joinLines(['a', 'b\n  \n\r\n'])).toBe('a\nb');
    // Whitespace at the end of a line that has text stays.
    expect(joinLines(['a  ', ''])).toBe('a  ');
  });

  it('gives an empty text when every line is blank, and for no lines', () => {
    expect(joinLines([' ', '\r\n', '\t'])).toBe('');
    expect(joinLines([])).toBe('');
    expect(joinLines([''])).toBe('');
  });

  it('leaves leading blank lines', () => {
    expect(joinLines(['', ' ', 'x'])).toBe('\n \nx');
  });

  it('is what content and confirm bodies are made of', () => {
    expect(content('Loom commands', ['a\r', '', '']).body).toBe('Loom commands\n---\na');
    expect(confirm('set x\n\n').body).toBe('set x');
  });
});
