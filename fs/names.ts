/**
 * @module Scratch names: the temp files tools write before an atomic rename. A new file with such
 * a name stays in the mount and is never a memory
 * unless it is renamed onto an ordinary name (see moves.ts).
 */

/** vim's swap files (.name.swp, .swo…): binary, fsync'd while vim runs, never a memory. */
const VIM_SWAP = /^\..+\.sw[a-px]$/;

const SCRATCH: readonly RegExp[] = [
  /^sed[A-Za-z0-9]{6}$/, // GNU sed -i
  /^XX[A-Za-z0-9]{6}$/, // perl -i (5.28 and later: mkstemp of XXXXXXXX beside the file)
  /^tmp[a-z0-9_]{8}/, // Python tempfile.mkstemp / NamedTemporaryFile
  /^tmp\.[A-Za-z0-9]{10}$/, // mktemp (the shell's t=$(mktemp -p .); … > "$t"; mv "$t" f)
  /^\.tmp/, // the SDK memory tool (.tmp-<pid>-<uuid>), and many others
  /\.tmp$/, // write-then-rename helpers: x.tmp
  /^\..+\.[A-Za-z0-9]{6}$/, // rsync's .<name>.XXXXXX
  /^.+\.\d{9,10}$/, // npm's write-file-atomic: <name>.<32-bit hash>
  // GNU patch: <name>.oXXXXXX beside the file (o: its output; e, i, p, r: its other temp files).
  // Six random letters and digits; asking for a lowercase letter and a capital or digit among them
  // keeps ordinary names (notes.summary) out and lets about 96% of patch's through.
  /^.+\.[eiopr](?=[A-Za-z0-9]{0,5}[a-z])(?=[A-Za-z0-9]{0,5}[A-Z0-9])[A-Za-z0-9]{6}$/,
  VIM_SWAP,
  /^4913$/, // vim's "can I write here" probe
  /~$/, // editor backups
  /^\.#/, // emacs lock files
  /^#.*#$/, // emacs autosave files
];

/** Directories made by mkdtemp (Python's tempfile.mkdtemp / TemporaryDirectory, mktemp -d): what is written in them is scratch too. */
const SCRATCH_DIR: readonly RegExp[] = [
  // Python tempfile.mkdtemp: 8 of [a-z0-9_]; a digit among them (92% of its names) keeps tmp_project out.
  /^tmp(?=[a-z_]{0,7}[0-9])[a-z0-9_]{8}$/,
  /^tmp\.[A-Za-z0-9]{10}$/, // mktemp -d
];

/**
 * Paths inside a `.git` directory are the working state of a version-control tool: binary
 * (zlib objects, the index) and rewritten constantly. They live in the mount like scratch files,
 * are never memories, and are exempt from the UTF-8 rule, so `git init/add/commit` work in a mount.
 * vim's swap files are the same kind of state: binary, and fsync'd while vim runs (a save would
 * fail that fsync with EILSEQ and drop the file under vim).
 */
export function isMountLocalPath(path: string): boolean {
  return path.includes('/.git/') || path.endsWith('/.git') || VIM_SWAP.test(path.slice(path.lastIndexOf('/') + 1));
}

export function isScratchName(name: string): boolean {
  return SCRATCH.some((re) => re.test(name));
}

/** Whether some directory above `path` is a temp directory (mkdtemp's names). */
export function inScratchDir(path: string): boolean {
  const segments = path.split('/');
  for (let i = 1; i < segments.length - 1; i++) if (SCRATCH_DIR.some((re) => re.test(segments[i]!))) return true;
  return false;
}
