/** @module Pure path algebra for memory paths: segments, ancestry, prefixes, slugs (the path rules are in src/validate/memory.ts). */
export function segments(path: string): string[] {
  return path.slice(1).split('/');
}

/** Proper ancestors of a path, nearest last: "/a/b/c" → ["/a", "/a/b"]. */
export function ancestors(path: string): string[] {
  const segs = segments(path);
  const out: string[] = [];
  for (let i = 1; i < segs.length; i++) out.push('/' + segs.slice(0, i).join('/'));
  return out;
}

export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function joinPath(dir: string, name: string): string {
  return dir === '/' ? '/' + name : dir + '/' + name;
}

/**
 * The smallest string greater than every path inside `dir + "/"`: "/" is 0x2F and "0" is 0x30,
 * so under binary collation all of "/a/…" sorts between "/a/" and "/a0".
 */
export function subtreeEnd(dirWithSlash: string): string {
  return dirWithSlash.slice(0, -1) + '0';
}

/** Mount slug: the name lowercased, each run of characters other than a–z and 0–9 one hyphen. */
export function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug || 'store';
}
