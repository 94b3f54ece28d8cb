/**
 * @module A server-sent events client for the tests: a real `fetch` (a socket to the real server, or
 * an in-process app's fetch), the stream parsed as the EventSource spec says (fields id, event,
 * data; lines starting with ":" are comments), events handed out in order, and a close that hangs up.
 */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The next event (waits for it); rejects if the stream ends first. */
  next(): Promise<SseEvent>;
  /** Comment lines seen so far (heartbeats), without the ":". */
  comments: string[];
  /** Hangs up (aborts the request and cancels the body). */
  close(): Promise<void>;
}

type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export async function openEvents(url: string, headers: Record<string, string>, fetch: Fetch = globalThis.fetch): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const queue: SseEvent[] = [];
  const waiting: { resolve(e: SseEvent): void; reject(err: Error): void }[] = [];
  const comments: string[] = [];
  let ended: Error | null = null;
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();

  const push = (e: SseEvent) => {
    const w = waiting.shift();
    if (w) w.resolve(e);
    else queue.push(e);
  };
  const end = (err: Error) => {
    ended ??= err;
    for (const w of waiting.splice(0)) w.reject(ended);
  };

  void (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const e: SseEvent = { data: '' };
          const data: string[] = [];
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) {
              comments.push(line.slice(1).trim());
              continue;
            }
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            isEvent = true;
            if (field === 'data') data.push(value);
            else if (field === 'id') e.id = value;
            else if (field === 'event') e.event = value;
          }
          if (isEvent) push({ ...e, data: data.join('\n') });
        }
      }
      end(new Error('the event stream ended'));
    } catch (err) {
      end(err instanceof Error ? err : new Error(String(err)));
    }
  })();

  return {
    status: res.status,
    headers: res.headers,
    comments,
    next() {
      const e = queue.shift();
      if (e) return Promise.resolve(e);
      if (ended) return Promise.reject(ended);
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    async close() {
      abort.abort();
      await reader.cancel().catch(() => {});
    },
  };
}
