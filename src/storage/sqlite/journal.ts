/**
 * @module The write-behind journal (sqlite/write-behind.ts): a file beside the database where each
 * mount write held back from its commit is appended, as data, before its close() is answered. A
 * plain write(2) into the OS page cache, so a crash of the process (kill -9) cannot lose it, as a
 * relaxed commit's WAL frames cannot be lost. Emptied once its batch has committed.
 *
 * A record is a 4-byte length, the CRC-32 of the body and the body: a 4-byte length and JSON
 * `{ "b": batch, "w": write }` with the write's text (if it has one) left out, then that text as
 * UTF-8 (a 4 KiB text costs a copy, not a JSON escape). Reading stops at the first record that is
 * cut short or does not match its CRC (a power loss may leave one behind; what follows it was never
 * acknowledged as durable).
 */
import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { JournaledWrite } from '../port.js';

const HEADER = 8;

/** The journal of the database at `dbFile`: beside it, as SQLite's -wal and -shm are. */
export const journalFileOf = (dbFile: string): string => `${dbFile}-writes`;

export interface JournalRecord {
  /** The held batch it belonged to: a batch commits whole or not at all. */
  batch: number;
  write: JournaledWrite;
}

export interface Journal {
  append(record: JournalRecord): void;
  /** Empties the file (its batch has committed). */
  reset(): void;
  close(): void;
}

export function openJournal(file: string): Journal {
  let fd: number | null = openSync(file, 'a');
  let empty = false;
  const live = (): number => {
    if (fd === null) throw new Error('the write-behind journal is closed');
    return fd;
  };
  return {
    append(record) {
      const { content, ...rest } = record.write.input as { content?: string };
      const head = JSON.stringify({ b: record.batch, w: { method: record.write.method, input: rest }, t: content !== undefined });
      const headBytes = Buffer.byteLength(head);
      const length = 4 + headBytes + (content === undefined ? 0 : Buffer.byteLength(content));
      const buf = Buffer.allocUnsafe(HEADER + length);
      buf.writeUInt32LE(length, 0);
      buf.writeUInt32LE(headBytes, HEADER);
      buf.write(head, HEADER + 4, 'utf8');
      if (content !== undefined) buf.write(content, HEADER + 4 + headBytes, 'utf8');
      buf.writeUInt32LE(crc32(buf.subarray(HEADER)), 4);
      // One write(2) per record: the page cache has all of it or, after a short write's error, it is refused.
      const n = writeSync(live(), buf);
      if (n !== buf.length) throw new Error(`short write to the write-behind journal (${n} of ${buf.length} bytes)`);
      empty = false;
    },
    reset() {
      if (empty) return;
      ftruncateSync(live(), 0);
      empty = true;
    },
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

/** The records a journal file holds, in order, up to the first damaged one; none if there is no file. */
export function readJournal(file: string): JournalRecord[] {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const records: JournalRecord[] = [];
  for (let at = 0; at + HEADER <= buf.length; ) {
    const length = buf.readUInt32LE(at);
    const body = buf.subarray(at + HEADER, at + HEADER + length);
    if (body.length !== length || crc32(body) !== buf.readUInt32LE(at + 4)) break;
    const headBytes = body.readUInt32LE(0);
    const parsed = JSON.parse(body.toString('utf8', 4, 4 + headBytes)) as { b: number; w: JournaledWrite; t: boolean };
    if (parsed.t) (parsed.w.input as { content?: string }).content = body.toString('utf8', 4 + headBytes);
    records.push({ batch: parsed.b, write: parsed.w });
    at += HEADER + length;
  }
  return records;
}
