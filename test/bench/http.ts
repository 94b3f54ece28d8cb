/** @module A small keep-alive HTTP client for the bench, and the API load runner (N clients, latencies). */
import { Agent, request } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

export interface Api {
  /** Sends a request and parses its JSON answer (an error above 299). */
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** GETs `path` and returns its body as text (GET /metrics). */
  text(path: string): Promise<string>;
}

/** One series' value in a Prometheus text page (`name` or `name{labels}` exactly as printed), NaN when absent. */
export function metricSample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : NaN;
}

export function apiClient(url: string, apiKey: string): Api {
  const base = new URL(url);
  function call<T>(method: string, path: string, body: unknown, json: boolean): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const send = (retried: boolean): Promise<T> => new Promise<T>((resolve, reject) => {
      const req = request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path,
          headers: {
            'x-api-key': apiKey,
            'anthropic-version': '2023-06-01',
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if ((res.statusCode ?? 500) >= 300) return reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
            resolve(!json ? (text as T) : text ? (JSON.parse(text) as T) : (undefined as T));
          });
          res.on('error', reject);
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed while idle (a server older than api/server.ts's
        // 65 s keep-alive, in an A/B run): the request never reached it, so it is sent again once.
        if (!retried && req.reusedSocket && err.code === 'ECONNRESET') resolve(send(true));
        else reject(err);
      });
      req.end(payload);
    });
    return send(false);
  }
  return {
    call: <T>(method: string, path: string, body?: unknown) => call<T>(method, path, body, true),
    text: (path: string) => call<string>('GET', path, undefined, false),
  };
}

export interface LoadResult {
  opsPerSec: number;
  p50: number;
  p99: number;
}

/** Runs `total` calls of `op(i)` from `clients` concurrent loops; latencies in ms. */
export async function load(clients: number, total: number, op: (i: number) => Promise<unknown>): Promise<LoadResult> {
  const lat: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        await op(i);
        lat.push(performance.now() - t);
      }
    }),
  );
  const secs = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  return { opsPerSec: total / secs, p50: pick(lat, 0.5), p99: pick(lat, 0.99) };
}

export function pick(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function median(xs: number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function closeAgent(): void {
  agent.destroy();
}
