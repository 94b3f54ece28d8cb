/** memory_edit's text edits (README "MCP"): a memory's lines for insert, and str_replace's uniqueness. */
import { describe, expect, it } from 'vitest';
import { applyEdit } from '../../../src/domain/text-edits.js';
import { codeOf } from '../../helpers/core.js';

const insert = (content: string, insertLine: number, insertText: string) => applyEdit(content, { command: 'insert', insertLine, insertText });

describe('insert', () => {
  it.each([
    ['', 0, 'X', 'X\n'],
    ['\n', 0, 'X', 'X\n\n'],
    ['\n', 1, 'X', '\nX\n'],
    ['\n\n', 1, 'X', '\nX\n\n'],
    ['\n\n', 2, 'X', '\n\nX\n'],
    ['a', 1, 'b', 'a\nb'],
    ['a\nb\n', 1, 'x\ny\n', 'a\nx\ny\nb\n'],
    ['a\n\nb\n', 2, 'X', 'a\n\nX\nb\n'],
  ])('%j at line %i with %j gives %j', (content, line, text, expected) => {
    expect(insert(content, line, text)).toBe(expected);
  });

  it.each([
    ['', 0],
    ['\n', 1],
    ['\n\n', 2],
    ['a', 1],
    ['a\n', 1],
    ['a\n\n', 2],
  ])('%j has %i lines: insert_line past them is refused', async (content, lines) => {
    expect(await codeOf(() => insert(content, lines + 1, 'X'))).toBe('invalid_request');
    expect(() => insert(content, lines + 1, 'X')).toThrow(`insert_line must be from 0 to ${lines}`);
    expect(() => insert(content, lines, 'X')).not.toThrow();
  });
});

describe('str_replace', () => {
  it('replaces a string that occurs once, and refuses one that occurs twice or not at all', async () => {
    expect(applyEdit('a b c', { command: 'str_replace', oldStr: 'b', newStr: 'B' })).toBe('a B c');
    expect(await codeOf(() => applyEdit('a a', { command: 'str_replace', oldStr: 'a', newStr: 'b' }))).toBe('invalid_request');
    expect(await codeOf(() => applyEdit('a', { command: 'str_replace', oldStr: 'z', newStr: 'b' }))).toBe('invalid_request');
  });
});
