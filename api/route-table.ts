/**
 * @module The app's route table, read from Hono's own registrations: the one source for the
 * `Allow` header of a 405 and for the test that the OpenAPI document covers every route.
 */
import type { Hono } from 'hono';

/** One handler registration: an upper-case method and a Hono path (`/v1/memory_stores/:store`). */
export interface Route {
  method: string;
  path: string;
}

/**
 * Every method+path with a handler. `app.use` registers its middleware as method ALL, and no
 * handler here registers as ALL (handlers name their methods), so ALL rows are middleware.
 */
export function routeTable(app: Pick<Hono, 'routes'> | { routes: readonly Route[] }): Route[] {
  const seen = new Set<string>();
  const out: Route[] = [];
  for (const r of app.routes) {
    if (r.method === 'ALL') continue;
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ method: r.method, path: r.path });
  }
  return out;
}

/** `/v1/memory_stores/:store` → `/v1/memory_stores/{store}`, the OpenAPI spelling. */
export function openApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * A matcher from a request path to the methods its routes answer; [] for a path no route has.
 * Parameters match one non-empty segment, as Hono's do. GET routes answer HEAD too (Hono runs
 * the GET handler without its body), so Allow says so.
 */
export function methodsByPath(routes: readonly Route[]): (pathname: string) => string[] {
  const patterns = new Map<string, { re: RegExp; methods: Set<string> }>();
  for (const { method, path } of routes) {
    let p = patterns.get(path);
    if (!p) {
      const source = path
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      p = { re: new RegExp(`^${source}$`), methods: new Set() };
      patterns.set(path, p);
    }
    p.methods.add(method);
    if (method === 'GET') p.methods.add('HEAD');
  }
  return (pathname) => {
    const methods = new Set<string>();
    for (const { re, methods: m } of patterns.values()) if (re.test(pathname)) for (const x of m) methods.add(x);
    return [...methods].sort();
  };
}
