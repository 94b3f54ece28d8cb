/**
 * GET /docs: Swagger UI for /openapi.json, with every asset served by mnemo itself (a firewalled
 * network reaches no CDN). The page references same-origin URLs only, and each one answers 200
 * with the right content type. Unauthenticated.
 */
import { describe, expect, it } from 'vitest';
import { rawRequest, useServer } from '../helpers/sdk.js';
import type { RunningServer } from '../helpers/server.js';

let server: RunningServer;
let html: string;
let docsUrl: URL;

useServer(async (s) => {
  server = s;
  docsUrl = new URL('/docs', s.url);
  const res = await fetch(docsUrl);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  html = await res.text();
});

/** Every URL the page names: src and href attributes, url(...) in inline CSS, and the spec url. */
function referencedUrls(page: string): string[] {
  const attrs = [...page.matchAll(/\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!);
  const cssUrls = [...page.matchAll(/url\(\s*['"]?([^'")]+)['"]?\s*\)/gi)].map((m) => m[1]!);
  const specUrls = [...page.matchAll(/\burl\s*:\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
  return [...attrs, ...cssUrls, ...specUrls];
}

describe('GET /docs', () => {
  it('renders Swagger UI for /openapi.json', () => {
    expect(html).toContain('SwaggerUIBundle');
    expect(html).toContain('swagger-ui');
    const spec = [...html.matchAll(/\burl\s*:\s*['"]([^'"]+)['"]/g)].map((m) => new URL(m[1]!, docsUrl).pathname);
    expect(spec).toEqual(['/openapi.json']);
  });

  it('references only same-origin URLs: no other host, no protocol-relative //cdn', () => {
    expect(html).not.toMatch(/https?:\/\//i);
    expect(html).not.toMatch(/["'(]\s*\/\//);
    const urls = referencedUrls(html);
    expect(urls.length).toBeGreaterThanOrEqual(3);
    for (const u of urls) expect(new URL(u, docsUrl).origin, u).toBe(docsUrl.origin);
  });

  it('serves every script and stylesheet it references with the right content type', async () => {
    const scripts = [...html.matchAll(/<script[^>]*\bsrc\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!);
    const styles = [...html.matchAll(/<link[^>]*\bhref\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    expect(styles.length).toBeGreaterThan(0);
    for (const [list, type] of [
      [scripts, /^(text|application)\/javascript/],
      [styles, /^text\/css/],
    ] as const) {
      for (const u of list) {
        const res = await fetch(new URL(u, docsUrl));
        expect(res.status, u).toBe(200);
        expect(res.headers.get('content-type'), u).toMatch(type);
        const text = await res.text();
        expect(text.length, u).toBeGreaterThan(1000);
        // The stylesheet loads nothing further from elsewhere (fonts and icons are inline data: URLs).
        if (list === styles) expect(text, u).not.toMatch(/@import|url\(\s*['"]?(https?:)?\/\//i);
      }
    }
  });

  it('turns off the online validator badge, which would load from validator.swagger.io', () => {
    expect(html).toMatch(/validatorUrl\s*:\s*['"]none['"]/);
  });

  it('serves no file outside swagger-ui-dist, and names none it does not ship', async () => {
    for (const path of [
      '/docs/assets/swagger-ui-dist/..%2Fpackage.json',
      '/docs/assets/swagger-ui-dist/%2E%2E%2F%2E%2E%2Fpackage.json',
      '/docs/assets/swagger-ui-dist/package.json',
      '/docs/assets/swagger-ui-dist/nope.js',
      '/docs/assets/package.json',
    ]) {
      const res = await rawRequest(server.url, 'GET', path);
      expect(res.status, path).toBe(404);
    }
  });
});
