/**
 * @module The console's notices after an action. A redirect names one by its code (`?notice=`),
 * never by its text or by an id to print: the page shows only these fixed sentences, so a link
 * from elsewhere cannot make the console say anything else. A redaction adds how many other
 * versions still hold its text (`held`, a number; anything else reads as 0).
 */

export type NoticeCode = 'session_ended' | 'version_redacted' | 'signed_out' | 'session_over' | 'memory_saved' | 'memory_unchanged' | 'memory_deleted';

const TEXTS: Record<NoticeCode, string> = {
  session_ended: 'The session was ended and its stores unmounted.',
  version_redacted: 'The version was redacted: its content and path are erased.',
  signed_out: 'You are signed out.',
  session_over: 'Your console session has ended (signed out, 12 hours idle, or its key revoked), so that was not done: sign in again.',
  memory_saved: 'Saved: the memory has a new version.',
  memory_unchanged: 'The text was not changed, so no version was written.',
  memory_deleted: 'The memory was deleted: it is gone from the store and its mounts, and its versions stay in the history until redacted.',
};

/** A console path with a notice to show on arrival. */
export function withNotice(path: string, code: NoticeCode, held?: number): string {
  const p = new URLSearchParams({ notice: code, ...(held ? { held: String(held) } : {}) });
  return `${path}?${p.toString()}`;
}

/** The sentence for the query's `notice`, or undefined when it names none. */
export function noticeText(q: Record<string, string | undefined>): string | undefined {
  const code = q['notice'];
  if (!code || !Object.hasOwn(TEXTS, code)) return undefined;
  if (code !== 'version_redacted') return TEXTS[code as NoticeCode];
  // The text is stored once: its bytes stay while another unredacted version in the workspace holds it (the API's `content_still_held_by`).
  const held = q['held'];
  const n = held && /^[1-9]\d{0,8}$/.test(held) ? Number(held) : 0;
  if (n === 0) return TEXTS.version_redacted;
  return `The version was redacted: its path is erased, but its content is not: ${n} other ${n === 1 ? 'version' : 'versions'} in this workspace still ${n === 1 ? 'holds' : 'hold'} the same text, which stays stored until every version holding it is redacted.`;
}
