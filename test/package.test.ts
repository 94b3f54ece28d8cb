/**
 * The package installs as a command: `npm ci` builds (prepare), `npm pack` ships the compiled
 * service, the binary and the README but no tests, and the Docker files build and report health
 * the way the README says (no Docker engine runs here, so those are read, not run).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/server.js';

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

interface Manifest {
  name: string;
  version: string;
  scripts?: Record<string, string>;
  gypfile?: boolean;
  bundleDependencies?: string[] | boolean;
  bundledDependencies?: string[] | boolean;
}

/**
 * The install-time scripts npm runs for an installed package: preinstall, install, postinstall,
 * and `node-gyp rebuild` for a binding.gyp when neither preinstall nor install is set (and
 * gypfile is not false).
 */
function installScripts(dir: string, pkg: Manifest): string[] {
  const scripts = (['preinstall', 'install', 'postinstall'] as const).filter((s) => pkg.scripts?.[s]);
  const gyp = !scripts.includes('preinstall') && !scripts.includes('install') && pkg.gypfile !== false && existsSync(join(dir, 'binding.gyp'));
  return gyp ? [...scripts, 'binding.gyp'] : scripts;
}

/**
 * Every package installed under `nodeModules`, nested and scoped ones included, with its folder;
 * bundled dependencies are left out (npm never runs their scripts and they cannot be listed).
 */
function installedPackages(nodeModules: string, bundled: ReadonlySet<string> | 'all' = new Set()): { dir: string; pkg: Manifest }[] {
  if (!existsSync(nodeModules)) return [];
  const dirs = readdirSync(nodeModules)
    .filter((n) => !n.startsWith('.'))
    .flatMap((n) => (n.startsWith('@') ? readdirSync(join(nodeModules, n)).map((m) => `${n}/${m}`) : [n]))
    .filter((n) => bundled !== 'all' && !bundled.has(n));
  return dirs.flatMap((n) => {
    const dir = join(nodeModules, n);
    if (!existsSync(join(dir, 'package.json'))) return [];
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    const inside = pkg.bundleDependencies ?? pkg.bundledDependencies ?? [];
    return [{ dir, pkg }, ...installedPackages(join(dir, 'node_modules'), inside === true ? 'all' : new Set(inside || []))];
  });
}

/**
 * Whether an allowScripts key names this package, as npm reads a registry package's key: the bare
 * name or `name@*` for any version, `name@1.2.3` (or `name@1.2.3 || 1.2.4`) for those versions only.
 */
function names(key: string, name: string, version: string): boolean {
  const at = key.indexOf('@', 1);
  if ((at < 0 ? key : key.slice(0, at)) !== name) return false;
  const spec = at < 0 ? '' : key.slice(at + 1).trim();
  return spec === '' || spec === '*' || spec.split('||').some((v) => v.trim() === version);
}

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

  it('names every installed package with an install-time script in allowScripts, so npm 12 neither leaves a native addon unbuilt nor runs an unreviewed script', () => {
    const allowScripts = (JSON.parse(read('package.json')) as { allowScripts: Record<string, unknown> }).allowScripts;
    for (const [key, decision] of Object.entries(allowScripts)) expect(typeof decision, key).toBe('boolean');
    const installed = installedPackages(join(REPO_ROOT, 'node_modules'))
      .map(({ dir, pkg }) => ({ name: pkg.name, version: pkg.version, scripts: installScripts(dir, pkg) }))
      .filter((p) => p.scripts.length > 0);
    // The walk sees the one install script the service cannot do without: better-sqlite3's addon build.
    expect(installed.map((p) => p.name)).toContain('better-sqlite3');
    // A package installed only on another platform is known here by the lockfile's flag.
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { name?: string; version?: string; hasInstallScript?: boolean }> };
    const locked = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
      .map(([path, entry]) => ({ name: entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), version: entry.version ?? '', scripts: ['hasInstallScript in package-lock.json'] }));
    const found = new Map<string, { name: string; version: string; scripts: string[] }>();
    for (const p of [...installed, ...locked]) found.set(`${p.name}@${p.version}`, { ...p, scripts: [...(found.get(`${p.name}@${p.version}`)?.scripts ?? []), ...p.scripts] });
    const unnamed = [...found.values()].filter(({ name, version }) => !Object.keys(allowScripts).some((key) => names(key, name, version)));
    expect(unnamed, 'packages with install-time scripts that allowScripts in package.json does not name (add each as true or false)').toEqual([]);
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
