/**
 * @module The transport of `mnemo mcp`: newline-delimited JSON-RPC on stdin and stdout, as the
 * SDK's StdioServerTransport, except that it answers every request it has read before it closes.
 * The SDK's transport has no notion of stdin's end, so a server that closed on 'end' dropped the
 * answers still being worked on (the tools that run on reader threads, memory_list and
 * memory_search, always were), and a last line with no "\n" was never read. Here stdin's end
 * reads that last line, then waits for every request it delivered to be answered (or cancelled by
 * the client) before `onclose`.
 *
 * And it answers a line that is not a JSON-RPC message, as JSON-RPC 2.0 says, and logs it: -32700
 * (parse error) for a line that is not JSON, -32600 (invalid request) for JSON that is not a
 * request, notification or response (`params` not an object, `method` not a string, no
 * `jsonrpc`), with the request's id when it has one, else null. The SDK's transport dropped such a
 * line silently (only `onerror`): the client waited for its timeout with nothing in the log.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  JSONRPCMessageSchema,
  JSONRPCRequestSchema,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { excerpt } from '../../src/index.js';

/** A line longer than this is refused (the SDK's transport's limit too), not buffered further. */
const MAX_LINE_CHARS = 10 * 1024 * 1024;
/** How long the answers still being worked on may take once stdin has ended. */
const DRAIN_MS = 30_000;

export interface LineTransportOptions {
  /** Where a refused line is logged (at warn). */
  log: (line: string) => void;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** How long to wait, once stdin has ended, for the requests read to be answered (30 s). */
  drainMs?: number;
}

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #log: (line: string) => void;
  readonly #input: NodeJS.ReadableStream;
  readonly #output: NodeJS.WritableStream;
  /** The requests delivered and not yet answered. */
  readonly #pending = new Set<RequestId>();
  #buffer = '';
  /** Inside a line that was refused for its length: the rest of it, up to its "\n", is dropped. */
  #skipping = false;
  #lineNumber = 0;
  #ended = false;
  #closed = false;
  readonly #drainMs: number;
  #drainTimer: NodeJS.Timeout | null = null;

  constructor({ log, input = process.stdin, output = process.stdout, drainMs = DRAIN_MS }: LineTransportOptions) {
    this.#log = log;
    this.#input = input;
    this.#output = output;
    this.#drainMs = drainMs;
  }

  async start(): Promise<void> {
    this.#input.setEncoding('utf8');
    this.#input.on('data', this.#onData);
    this.#input.on('error', this.#onError);
    this.#input.once('end', this.#onEnd);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const written = this.#write(message);
    if (('result' in message || 'error' in message) && message.id !== undefined) this.#settle(message.id);
    return written;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#drainTimer) clearTimeout(this.#drainTimer);
    this.#input.off('data', this.#onData);
    this.#input.off('error', this.#onError);
    this.#input.off('end', this.#onEnd);
    this.#input.pause();
    this.#buffer = '';
    this.onclose?.();
  }

  #onData = (chunk: string): void => {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
      const line = this.#buffer + chunk.slice(start, nl);
      this.#buffer = '';
      start = nl + 1;
      if (this.#skipping) this.#skipping = false;
      else this.#receive(line);
    }
    if (this.#skipping) return;
    this.#buffer += chunk.slice(start);
    if (this.#buffer.length > MAX_LINE_CHARS) {
      this.#buffer = '';
      this.#skipping = true;
      this.#refuse(++this.#lineNumber, ErrorCode.ParseError, `Parse error: a line longer than ${MAX_LINE_CHARS} characters`, null, '');
    }
  };

  #onEnd = (): void => {
    this.#ended = true;
    const last = this.#buffer;
    this.#buffer = '';
    if (!this.#skipping && last.trim() !== '') this.#receive(last);
    this.#closeWhenAnswered();
    if (!this.#closed) this.#drainTimer = setTimeout(this.#giveUp, this.#drainMs);
  };

  #giveUp = (): void => {
    const ids = [...this.#pending].map((id) => JSON.stringify(id)).join(', ');
    this.#log(`mnemo: warn: mnemo mcp: stdin ended and ${this.#pending.size} request(s) were still unanswered after ${this.#drainMs / 1000} s (ids ${ids}): closing without them`);
    void this.close();
  };

  #onError = (error: Error): void => this.onerror?.(error);

  #receive(raw: string): void {
    const n = ++this.#lineNumber;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.#refuse(n, ErrorCode.ParseError, 'Parse error: the line is not JSON', null, line);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      this.#refuse(n, ErrorCode.InvalidRequest, `Invalid Request: ${invalidRequest(value)}`, idOf(value), line);
      return;
    }
    const message = parsed.data;
    if ('method' in message && 'id' in message) this.#pending.add(message.id);
    this.onmessage?.(message);
    // A cancelled request is never answered (the SDK's Protocol drops its result).
    if ('method' in message && message.method === 'notifications/cancelled' && !('id' in message)) {
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') this.#settle(requestId);
    }
  }

  #refuse(n: number, code: number, message: string, id: RequestId | null, line: string): void {
    this.#log(`mnemo: warn: mnemo mcp: stdin line ${n} answered ${code} (${message})${line ? `: ${excerpt(line)}` : ''}`);
    void this.#write({ jsonrpc: '2.0', id, error: { code, message } });
  }

  #write(message: JSONRPCMessage | { jsonrpc: '2.0'; id: RequestId | null; error: { code: number; message: string } }): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.#output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#output.once('drain', resolve);
    });
  }

  #settle(id: RequestId): void {
    this.#pending.delete(id);
    this.#closeWhenAnswered();
  }

  #closeWhenAnswered(): void {
    if (this.#ended && this.#pending.size === 0) void this.close();
  }
}

/** What makes a JSON value no JSON-RPC message, naming the field when it looks like a request. */
function invalidRequest(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !('method' in value) || !('id' in value)) {
    return 'not a JSON-RPC 2.0 request, notification or response';
  }
  const parsed = JSONRPCRequestSchema.safeParse(value);
  const issues = parsed.success ? [] : parsed.error.issues;
  return issues.map((i) => `${i.path.map(String).join('.') || 'request'}: ${i.message}`).join('; ') || 'malformed request';
}

/** The id of a message that is no valid request, when it has one a response can carry. */
function idOf(value: unknown): RequestId | null {
  if (typeof value !== 'object' || value === null || !('id' in value)) return null;
  const id = (value as { id: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
