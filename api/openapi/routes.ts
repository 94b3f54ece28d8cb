/**
 * @module GET /openapi.json and GET /docs (Swagger UI), unauthenticated. Every asset the docs page
 * loads is a file of swagger-ui-dist served from here: @hono/swagger-ui points at a CDN by default,
 * which users behind a firewall cannot reach, so its base URL is ours.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { swaggerUI } from '@hono/swagger-ui';
import { Hono } from 'hono';
import { MnemoError, packageVersion } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { openApiDocument } from './document.js';

/** Where the page finds its assets, relative so the docs also work behind a path-prefix proxy. */
const ASSET_BASE = 'docs/assets';
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.png': 'image/png',
};

export function docsRoutes() {
  const app = new Hono<AppEnv>();
  const version = packageVersion();
  app.get('/openapi.json', (c) => c.json(openApiDocument(version)));
  app.get(
    '/docs',
    swaggerUI({
      title: 'mnemo API',
      baseUrl: ASSET_BASE,
      url: 'openapi.json',
      // Swagger UI would otherwise load a badge from validator.swagger.io.
      validatorUrl: 'none',
    }),
  );

  const assets = assetFiles();
  const cache = new Map<string, Buffer>();
  app.get('/docs/assets/swagger-ui-dist/:file', (c) => {
    const name = c.req.param('file');
    const file = assets.get(name);
    if (!file) throw new MnemoError('not_found', `no docs asset ${name}`);
    let bytes = cache.get(name);
    if (!bytes) cache.set(name, (bytes = readFileSync(file.path)));
    c.header('content-type', file.type);
    c.header('cache-control', 'public, max-age=86400');
    return c.body(new Uint8Array(bytes));
  });
  return app;
}

/** The servable files of swagger-ui-dist, by name: a fixed list, so no request names a path. */
function assetFiles(): Map<string, { path: string; type: string }> {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const out = new Map<string, { path: string; type: string }>();
  for (const name of readdirSync(dir)) {
    const type = TYPES[name.slice(name.lastIndexOf('.'))];
    if (type) out.set(name, { path: join(dir, name), type });
  }
  return out;
}
