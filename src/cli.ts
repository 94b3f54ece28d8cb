/** @module Command-line parsing: `mnemo <command> [args] [--flag value | --flag=value | --switch]`. */

export interface ParsedArgs {
  command: string;
  args: string[];
  flags: Record<string, string | boolean>;
}

const SWITCHES = new Set(['read-only', 'help', 'json']);

export function parseArgs(argv: string[]): ParsedArgs {
  const [command = 'help', ...rest] = argv;
  const args: string[] = [];
  const flags: Record<string, string | boolean> = {};
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (!a.startsWith('--')) {
      args.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    if (eq >= 0) flags[name] = a.slice(eq + 1);
    else if (SWITCHES.has(name)) flags[name] = true;
    else {
      const value = rest[i + 1];
      if (value === undefined) throw new Error(`--${name} needs a value`);
      flags[name] = value;
      i++;
    }
  }
  return { command, args, flags };
}

export const USAGE = `mnemo — versioned memory stores for AI agents

Usage:
  mnemo serve [--host H] [--port P] [--data-dir D] [--mount-root M]
      Start the HTTP API (and session mounts). Prints its URL on the first line.
  mnemo keys create [--name N] [--role admin|read_write|read_only] [--data-dir D]
      Mint an API key in the default workspace and print its secret once.
  mnemo mount <memory_store_id> <dir> [--read-only] [--data-dir D]
      Mount one store at a directory until interrupted (Ctrl-C unmounts).

Environment: MNEMO_HOST, MNEMO_PORT, MNEMO_DATA_DIR, MNEMO_MOUNT_ROOT, MNEMO_ADMIN_KEY.
`;
