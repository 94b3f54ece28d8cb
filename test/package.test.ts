/**
 * The package installs as a command: `npm ci` builds (prepare), `npm pack` ships the compiled
 * service, the binary and the README but no tests, and the Docker files build and report health
 * the way the README says (no Docker engine runs here, so those are read, not run).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/server.js';

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

describe('the package', () => {
  it('builds the FUSE addon and dist/ on npm ci (prepare) and names mnemo as its binary', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string>; bin: Record<string, string> };
    expect(pkg.scripts['prepare']).toBe('npm run build:native && npm run build');
    expect(pkg.scripts['build:native']).toMatch(/^node-gyp rebuild --directory=native\/fuse/);
    expect(pkg.bin).toEqual({ mnemo: 'bin/mnemo.js' });
    expect(read('bin/mnemo.js')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it('packs dist/src, dist/api, dist/fs, bin and the README, and no tests or source maps', () => {
    // --ignore-scripts: list what would ship without rebuilding dist/ under the other tests' feet.
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    for (const f of ['README.md', 'bin/mnemo.js', 'package.json', 'dist/src/main.js', 'dist/api/app.js', 'dist/fs/index.js']) expect(files).toContain(f);
    expect(files.filter((f) => f.startsWith('dist/test/') || f.endsWith('.map') || f.endsWith('.ts'))).toEqual([]);
  });
});

describe('the Docker files', () => {
  it('build dist/ in a build stage after the sources are in (npm ci runs prepare) and ship production dependencies', () => {
    const dockerfile = read('docker/Dockerfile');
    const stages = dockerfile.split(/^FROM /m).slice(1);
    expect(stages).toHaveLength(2);
    const build = stages[0]!;
    const npmCi = build.indexOf('RUN npm ci');
    expect(npmCi).toBeGreaterThan(-1);
    for (const copy of ['tsconfig.json', 'COPY src src', 'COPY api api', 'COPY fs fs', 'COPY native native']) {
      expect(build.indexOf(copy), copy).toBeGreaterThan(-1);
      expect(build.indexOf(copy), copy).toBeLessThan(npmCi);
    }
    expect(build).toMatch(/npm prune --omit=dev/);
    // The addon compiles against libfuse 3 in the build stage; the image runs it with fuse3.
    expect(build).toMatch(/libfuse3-dev/);
    expect(stages[1]).toMatch(/native\/fuse\/build\/Release\/fuse\.node/);
  });

  it('check health on GET /healthz, run under an init, and leave MNEMO_ADMIN_KEY optional so a generated key is printed', () => {
    expect(read('docker/Dockerfile')).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m);
    const compose = read('docker/compose.yaml');
    expect(compose).toMatch(/^\s+init: true$/m);
    expect(compose).not.toMatch(/MNEMO_ADMIN_KEY:\?/);
  });

  it("bind each server's mount root at the same path inside its container as on the host, so a session's host_path exists on the host", () => {
    const compose = read('docker/compose.yaml');
    const services = compose.split(/^  (?=[\w-]+:)/m).slice(1);
    const servers = services.filter((s) => /MNEMO_NODE_ID/.test(s));
    expect(servers.map((s) => s.slice(0, s.indexOf(':')))).toEqual(['mnemo', 'mnemo-a', 'mnemo-b']);
    const dockerfileRoot = /MNEMO_MOUNT_ROOT=(\S+)/.exec(read('docker/Dockerfile'))![1];
    const roots = new Set<string>();
    for (const s of servers) {
      const root = /MNEMO_MOUNT_ROOT: (\S+)/.exec(s)?.[1] ?? dockerfileRoot!;
      roots.add(root);
      const binds = [...s.matchAll(/source: (\S+)\n\s+target: (\S+)/g)].map((m) => [m[1], m[2]]);
      expect(binds, s).toContainEqual([root, root]);
    }
    expect(roots.size).toBe(3);
  });
});
