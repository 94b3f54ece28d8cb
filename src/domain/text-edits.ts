/**
 * @module The two edits of MCP's memory_edit on a memory's text: replace a string that occurs
 * exactly once, and insert whole lines after a line. Pure: what to write from what was read.
 */
import { MnemoError } from './errors.js';

export type MemoryEdit =
  | { command: 'str_replace'; oldStr: string; newStr: string }
  | { command: 'insert'; insertLine: number | undefined; insertText: string };

export function applyEdit(content: string, edit: MemoryEdit): string {
  return edit.command === 'str_replace' ? replaceOnce(content, edit.oldStr, edit.newStr) : insertAt(content, edit.insertLine, edit.insertText);
}

function replaceOnce(content: string, oldStr: string, newStr: string): string {
  const at = content.indexOf(oldStr);
  if (at < 0) throw new MnemoError('invalid_request', 'old_str does not occur in the memory; read it again and copy the text exactly', { field: 'old_str' });
  if (content.indexOf(oldStr, at + 1) >= 0) {
    throw new MnemoError('invalid_request', 'old_str occurs more than once; include more surrounding text so it is unique', { field: 'old_str' });
  }
  return content.slice(0, at) + newStr + content.slice(at + oldStr.length);
}

/**
 * A memory's lines are its text split at each "\n", where a final "\n" ends the last line instead
 * of starting another: "" has none, "\n" one (empty), "a\nb" and "a\nb\n" two. The text keeps
 * whether it ended in "\n" (an empty one gains it).
 */
function insertAt(content: string, line: number | undefined, text: string): string {
  const trailing = content.endsWith('\n');
  const lines = content === '' ? [] : (trailing ? content.slice(0, -1) : content).split('\n');
  if (line === undefined || line < 0 || line > lines.length) {
    throw new MnemoError('invalid_request', `insert_line must be from 0 to ${lines.length}`, { field: 'insert_line' });
  }
  lines.splice(line, 0, ...text.replace(/\n$/, '').split('\n'));
  return lines.join('\n') + (trailing || content === '' ? '\n' : '');
}
