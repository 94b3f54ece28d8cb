/** The binding's watch on requests a mount's handlers have not answered (fs/binding/unanswered.ts), on an injected clock. */
import { describe, expect, it } from 'vitest';
import { Unanswered } from '../../fs/binding/unanswered.js';

describe('requests left unanswered', () => {
  it('names a request once when it passes the bound, then says when it was answered; a prompt one is never named', () => {
    let now = 0;
    const lines: string[] = [];
    const u = new Unanswered(10_000, (line) => lines.push(line), () => now);
    const slow = u.begin('rename', '/d/e');
    const quick = u.begin('getattr', '/a.md');
    now = 4_000;
    u.answered(quick);
    u.look();
    expect(lines).toEqual([]);
    now = 12_500;
    u.look();
    now = 17_500;
    u.look();
    expect(lines).toEqual(["mnemo fs: rename '/d/e' unanswered for 12.5 s (its handler has not replied yet)"]);
    now = 20_000;
    u.answered(slow);
    u.answered(slow);
    expect(lines).toEqual([
      "mnemo fs: rename '/d/e' unanswered for 12.5 s (its handler has not replied yet)",
      "mnemo fs: rename '/d/e' answered after 20.0 s",
    ]);
  });
});
