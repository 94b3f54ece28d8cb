/**
 * @module Command-line parsing: `mnemo <command> [sub] [args] [--flag value | --flag=value | --switch]`.
 * Each command declares its own options and positional arguments and is parsed by `node:util`
 * parseArgs in strict mode, so a mistyped flag or a stray argument is refused (exit 2) instead of
 * being ignored while the command runs with defaults.
 */
import { parseArgs as parseNodeArgs } from 'node:util';
import { MOUNT_SYNC_MODES } from '../service/durability.js';

/**
 * A string option may list the only values it takes: anything else is refused at parse (exit 2).
 * `setting`: a configuration flag (cli/config.ts). Its environment variable left empty means unset,
 * but the flag given an empty value (`--data-dir ""`, `--data-dir=`) is refused (exit 2): taken as
 * is, it was the working directory (resolve('')) or, for --host, every interface.
 */
type Option = { type: 'string'; choices?: readonly string[]; setting?: true; excludes?: string } | { type: 'boolean' };
type Options = Record<string, Option>;

interface CommandSpec {
  /** The usage line(s) printed with errors and by `--help`. */
  usage: string;
  /** One sentence for `--help`. */
  summary: string;
  /** More lines for `mnemo --help` only (what a flag's values mean). */
  notes?: string;
  options: Options;
  /** Required positional arguments, by name. */
  positionals: string[];
  /** Those of `positionals` that name a file or directory: an empty one is refused (it would resolve to the working directory). */
  paths?: string[];
  /** Options that must be given (no silent default). */
  required?: string[];
}

/** A command's own input (a key's name, a workspace id): the service's rules judge its value. */
const str: Option = { type: 'string' };
const setting: Option = { type: 'string', setting: true };
const bool: Option = { type: 'boolean' };
/**
 * Where the database is (cli/config.ts), for every command but serve: the SQLite file in --data-dir
 * or PostgreSQL at --database-url, one or the other (both: exit 2, as the usage's `|` says).
 */
const DATA_DIR: Options = { 'data-dir': setting, 'database-url': { ...setting, excludes: 'data-dir' } };
/** --node-id (cli/config.ts): the commands that mount record it on their sessions. */
const NODE: Options = { 'node-id': setting };
const MOUNT_SYNC: Option = { type: 'string', choices: MOUNT_SYNC_MODES, setting: true };

/** Every flag of DESIGN §6 that `serve` reads (see cli/config.ts); other helpers' settings land here too. */
const SERVE_OPTIONS: Options = {
  // Beside PostgreSQL, serve's data directory still holds its pid file, its locks and the default mount root.
  'data-dir': setting,
  'database-url': setting,
  ...NODE,
  host: setting,
  port: setting,
  'mount-root': setting,
  'max-body-bytes': setting,
  'idempotency-ttl-seconds': setting,
  'checkpoint-max-bytes': setting,
  'log-level': setting,
  'mount-sync': MOUNT_SYNC,
  'mount-cache-seconds': setting,
  'rotate-admin-key': bool,
};

/** Commands by name; a command with subcommands is keyed "<command> <sub>". */
const COMMANDS: Record<string, CommandSpec> = {
  serve: {
    usage:
      'mnemo serve [--host H] [--port P] [--data-dir D] [--mount-root M] [--max-body-bytes N]\n' +
      '            [--idempotency-ttl-seconds S] [--checkpoint-max-bytes N] [--log-level L]\n' +
      '            [--mount-sync fsync|close] [--mount-cache-seconds S] [--rotate-admin-key]\n' +
      '            [--database-url URL] [--node-id N]',
    summary: 'Start the HTTP API (and session mounts). Prints its URL on the first line.',
    notes:
      'One server per data directory: a second one exits 1.\n' +
      '--mount-root M: sessions are mounted only under it; an active session recorded under\n' +
      'another root (a changed root, a backup copy) is mounted under this one on start.\n' +
      "--mount-sync fsync (default): a mount's close() is safe from a crash of mnemo, fsync()\n" +
      'puts it on disk, and every closed version is on disk within 100 ms; close: every\n' +
      'close() on a mount is on disk when it returns (slower saves).\n' +
      "--mount-cache-seconds S (default 1): how long the kernel keeps a mount's names and\n" +
      'attributes; writes made elsewhere drop what they make stale at once.\n' +
      '--rotate-admin-key: revoke the seeded admin key and make MNEMO_ADMIN_KEY the admin key.\n' +
      '--database-url postgres://…: PostgreSQL instead of the SQLite file in the data directory\n' +
      '(every command takes it); --node-id (default the hostname): names this host on the\n' +
      'sessions it mounts.',
    options: SERVE_OPTIONS,
    positionals: [],
  },
  'keys create': {
    usage:
      'mnemo keys create --role admin|read_write|read_only [--name N] [--workspace ID] [--stores ID,ID]\n' +
      '                  [--all-workspaces] [--data-dir D | --database-url URL]',
    summary: 'Mint an API key (default workspace unless --workspace) and print its secret once.',
    options: { ...DATA_DIR, role: str, name: str, workspace: str, stores: str, 'all-workspaces': bool },
    positionals: [],
    // An admin key by default would hand out the most power to whoever forgot the flag.
    required: ['role'],
  },
  'keys list': {
    usage: 'mnemo keys list [--workspace ID] [--json] [--data-dir D | --database-url URL]',
    summary: 'List keys (never their secrets); --json prints the API\'s api_key objects.',
    options: { ...DATA_DIR, workspace: str, json: bool },
    positionals: [],
  },
  'keys revoke': {
    usage: 'mnemo keys revoke <apikey_id> [--workspace ID] [--data-dir D | --database-url URL]',
    summary: 'Revoke a key; its next request fails.',
    options: { ...DATA_DIR, workspace: str },
    positionals: ['apikey_id'],
  },
  'workspaces create': {
    usage: 'mnemo workspaces create <name> [--data-dir D | --database-url URL]',
    summary: 'Create a workspace and print its id.',
    options: DATA_DIR,
    positionals: ['name'],
  },
  'workspaces list': {
    usage: 'mnemo workspaces list [--json] [--data-dir D | --database-url URL]',
    summary: 'List workspaces; --json prints the API\'s workspace objects.',
    options: { ...DATA_DIR, json: bool },
    positionals: [],
  },
  check: {
    usage: 'mnemo check [--data-dir D | --database-url URL]',
    summary: 'SQLite integrity check plus the domain\'s invariants; exits 1 and lists problems if any.',
    options: DATA_DIR,
    positionals: [],
  },
  backup: {
    usage: 'mnemo backup <file> [--data-dir D | --database-url URL]',
    summary: 'Consistent online copy of the database into a new file, safe while the server runs.',
    notes: 'SQLite only: with --database-url it exits 2 and names pg_dump.',
    options: DATA_DIR,
    positionals: ['file'],
    paths: ['file'],
  },
  restore: {
    usage: 'mnemo restore <file> [--data-dir D | --database-url URL]',
    summary: 'Replace the database with a checked backup; refused while a server, mount or mcp uses the data dir.',
    notes: 'Also restores into an empty or new directory. SQLite only: with --database-url it exits 2\nand names pg_restore.',
    options: DATA_DIR,
    positionals: ['file'],
    paths: ['file'],
  },
  mount: {
    usage:
      'mnemo mount <memory_store_id> <dir> [--read-only] [--data-dir D | --database-url URL]\n' +
      '            [--log-level L] [--mount-sync fsync|close] [--mount-cache-seconds S] [--node-id N]',
    summary: 'Mount one store at an empty or new directory until interrupted (Ctrl-C unmounts).',
    options: { ...DATA_DIR, ...NODE, 'read-only': bool, 'log-level': setting, 'mount-sync': MOUNT_SYNC, 'mount-cache-seconds': setting },
    positionals: ['memory_store_id', 'dir'],
    paths: ['dir'],
  },
  mcp: {
    usage: 'mnemo mcp [--data-dir D | --database-url URL] [--checkpoint-max-bytes N] [--log-level L]',
    summary: 'MCP server on stdio for the API key in MNEMO_API_KEY (its role and store grants apply).',
    options: { ...DATA_DIR, 'checkpoint-max-bytes': setting, 'log-level': setting },
    positionals: [],
  },
};

const GROUPS = new Set(['keys', 'workspaces']);

/** Each command's usage and the flags its parser accepts (a test holds the one to the other). */
export const commandFlags = (): { name: string; usage: string; flags: string[] }[] =>
  Object.entries(COMMANDS).map(([name, c]) => ({ name, usage: c.usage, flags: Object.keys(c.options) }));

const SHORT_USAGE = 'usage: mnemo <serve|keys|workspaces|check|backup|restore|mount|mcp> [args] [flags]   (mnemo --help for all)';

export type Parsed =
  /** Print `text` to stdout and exit 0. */
  | { kind: 'help'; text: string }
  | { kind: 'version' }
  /** Print `message` and `usage` to stderr and exit 2. */
  | { kind: 'error'; message: string; usage: string }
  | { kind: 'run'; command: string; sub: string | null; args: string[]; flags: Record<string, string | boolean> };

/** The usage of a command (or of every subcommand of a group), or of everything. */
export function usageOf(command?: string): string {
  const names = command === undefined ? [] : Object.keys(COMMANDS).filter((n) => n === command || n.startsWith(`${command} `));
  if (names.length === 0) return USAGE;
  return names.map((n) => `usage: ${COMMANDS[n]!.usage.replace(/\n/g, '\n       ')}`).join('\n');
}

function helpOf(command: string): string {
  const names = Object.keys(COMMANDS).filter((n) => n === command || n.startsWith(`${command} `));
  return `${names.map((n) => `${COMMANDS[n]!.usage}\n    ${COMMANDS[n]!.summary}`).join('\n')}\n`;
}

const wantsHelp = (argv: string[]): boolean => {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
};

export function parseArgs(argv: string[]): Parsed {
  const [command, ...rest] = argv;
  if (command === undefined) return { kind: 'error', message: 'mnemo: no command given', usage: SHORT_USAGE };
  if (command === '--help' || command === '-h') return { kind: 'help', text: USAGE };
  if (command === '--version') return { kind: 'version' };
  if (command === 'help') {
    const topic = rest[0];
    if (topic === undefined) return { kind: 'help', text: USAGE };
    // A mistyped topic is refused like a mistyped command, not answered with everything.
    if (!GROUPS.has(topic) && !(topic in COMMANDS)) return { kind: 'error', message: `mnemo help: unknown command: ${topic}`, usage: SHORT_USAGE };
    return { kind: 'help', text: helpOf(topic) };
  }
  if (!GROUPS.has(command) && !(command in COMMANDS)) {
    return { kind: 'error', message: `mnemo: unknown command: ${command}`, usage: SHORT_USAGE };
  }
  let sub: string | null = null;
  let name = command;
  let tail = rest;
  if (GROUPS.has(command)) {
    const first = rest[0];
    if (first !== undefined && `${command} ${first}` in COMMANDS) {
      sub = first;
      name = `${command} ${first}`;
      tail = rest.slice(1);
    } else if (wantsHelp(rest)) {
      return { kind: 'help', text: helpOf(command) };
    } else {
      const subs = Object.keys(COMMANDS).filter((n) => n.startsWith(`${command} `)).map((n) => n.split(' ')[1]);
      const why = first === undefined ? `mnemo ${command}: missing subcommand (${subs.join(', ')})` : `mnemo ${command}: unknown subcommand: ${first}`;
      return { kind: 'error', message: why, usage: usageOf(command) };
    }
  }
  if (wantsHelp(tail)) return { kind: 'help', text: helpOf(name) };
  const spec = COMMANDS[name]!;
  const fail = (message: string): Parsed => ({ kind: 'error', message: `mnemo ${name}: ${message}`, usage: usageOf(name) });
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    const options = Object.fromEntries(Object.entries(spec.options).map(([k, o]) => [k, { type: o.type }]));
    ({ values, positionals } = parseNodeArgs({ args: tail, options, strict: true, allowPositionals: true }));
  } catch (err) {
    return fail(parseErrorMessage(err));
  }
  for (const [k, o] of Object.entries(spec.options)) {
    const v = values[k];
    if (o.type === 'string' && o.setting && v === '') return fail(`--${k} is empty (leave the flag out for its default)`);
    if (o.type === 'string' && o.excludes && v !== undefined && values[o.excludes] !== undefined) {
      return fail(`--${o.excludes} and --${k} are alternatives: give one or the other`);
    }
    if (o.type === 'string' && o.choices && typeof v === 'string' && !o.choices.includes(v)) {
      return fail(`invalid --${k}: ${v} (${o.choices.join(' or ')})`);
    }
  }
  if (positionals.length < spec.positionals.length) {
    return fail(`missing ${spec.positionals.slice(positionals.length).map((p) => `<${p}>`).join(' ')}`);
  }
  if (positionals.length > spec.positionals.length) {
    return fail(`unexpected argument${positionals.length - spec.positionals.length > 1 ? 's' : ''}: ${positionals.slice(spec.positionals.length).join(' ')}`);
  }
  const empty = (spec.paths ?? []).filter((p) => positionals[spec.positionals.indexOf(p)] === '');
  if (empty.length > 0) return fail(`${empty.map((p) => `<${p}>`).join(' and ')} is an empty path`);
  const absent = (spec.required ?? []).filter((o) => values[o] === undefined);
  if (absent.length > 0) return fail(`${absent.map((o) => `--${o}`).join(' and ')} is required`);
  const flags: Record<string, string | boolean> = {};
  for (const [k, v] of Object.entries(values)) if (v !== undefined) flags[k] = v;
  return { kind: 'run', command, sub, args: positionals, flags };
}

/** node:util's messages, shortened to what a person at a shell needs. */
function parseErrorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) return `unknown option ${unknown[1]}`;
  return message.replace(/\. To specify .*$/s, '').replace(/^Option '([^']+)'/, 'option $1');
}

/** `mnemo --help`: every command's usage, summary and notes, from COMMANDS, so they cannot drift apart. */
export const USAGE = `mnemo — versioned memory stores for AI agents

Usage:
${Object.values(COMMANDS)
  .map((c) => [c.usage, ...[c.summary, ...(c.notes ? c.notes.split('\n') : [])].map((l) => `    ${l}`)].join('\n').replace(/^/gm, '  '))
  .join('\n')}
  mnemo --help | mnemo <command> --help | mnemo --version

Every command but serve (and restore) needs an existing data directory holding mnemo.db, or a
PostgreSQL database holding mnemo's schema (--database-url; serve, mount and mcp create it).
Unknown flags, missing or extra arguments and empty settings or paths exit 2 with the command's
usage.

Environment: MNEMO_HOST, MNEMO_PORT, MNEMO_DATA_DIR, MNEMO_MOUNT_ROOT, MNEMO_ADMIN_KEY,
MNEMO_MAX_BODY_BYTES, MNEMO_IDEMPOTENCY_TTL_SECONDS (flag --idempotency-ttl-seconds),
MNEMO_CHECKPOINT_MAX_BYTES (flag --checkpoint-max-bytes), MNEMO_LOG_LEVEL (flag --log-level),
MNEMO_MOUNT_SYNC (flag --mount-sync), MNEMO_MOUNT_CACHE_SECONDS (flag --mount-cache-seconds),
MNEMO_DATABASE_URL (flag --database-url), MNEMO_NODE_ID (flag --node-id), MNEMO_API_KEY
(mnemo mcp); limits and tuning (the README's Configuration): MNEMO_READER_THREADS,
MNEMO_MAX_INFLIGHT_BODIES, MNEMO_BODY_TIMEOUT_SECONDS, MNEMO_METRICS_PUBLIC, MNEMO_STORE_MAX_BYTES,
MNEMO_STORE_MAX_MEMORIES, MNEMO_WORKSPACE_MAX_SESSIONS, MNEMO_WORKSPACE_MAX_MOUNTS,
MNEMO_WORKSPACE_MAX_FEED_STREAMS, MNEMO_LOCAL_MAX_BYTES, MNEMO_MOUNT_LOCAL_MAX_BYTES,
MNEMO_MOUNT_SPIN_US, MNEMO_FUSE_TRACE (a file: mounts' FUSE request timings, written on SIGUSR2 and
at unmount).
`;
