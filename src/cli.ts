/** @module Command-line parsing: `mnemo <command> [args] [--flag value | --flag=value | --switch]`. */

export interface ParsedArgs {
  command: string;
  args: string[];
  flags: Record<string, string | boolean>;
}

const SWITCHES = new Set(['read-only', 'help', 'json', 'all-workspaces', 'rotate-admin-key']);

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
  mnemo serve [--host H] [--port P] [--data-dir D] [--mount-root M] [--rotate-admin-key]
      Start the HTTP API (and session mounts). Prints its URL on the first line.
      --rotate-admin-key: revoke the seeded admin key and make MNEMO_ADMIN_KEY the admin key.
  mnemo keys create [--name N] [--role admin|read_write|read_only] [--workspace ID]
                    [--stores ID,ID] [--all-workspaces] [--data-dir D]
      Mint an API key (default workspace unless --workspace) and print its secret once.
  mnemo keys list [--workspace ID] [--json]      List keys (never their secrets).
  mnemo keys revoke <apikey_id> [--workspace ID]  Revoke a key; its next request fails.
  mnemo workspaces create <name> | list
      Create a workspace (prints its id) or list them.
  mnemo check [--data-dir D]
      SQLite integrity check plus the domain's invariants; exits 1 and lists problems if any.
  mnemo backup <file> [--data-dir D]
      Consistent online copy of the database, safe while the server runs.
  mnemo restore <file> [--data-dir D]
      Replace the database with a checked backup; refused while a server runs on the data dir.
  mnemo mount <memory_store_id> <dir> [--read-only] [--data-dir D]
      Mount one store at a directory until interrupted (Ctrl-C unmounts).
  mnemo mcp [--data-dir D]
      MCP server on stdio for the API key in MNEMO_API_KEY (its role and store grants apply).

Environment: MNEMO_HOST, MNEMO_PORT, MNEMO_DATA_DIR, MNEMO_MOUNT_ROOT, MNEMO_ADMIN_KEY,
MNEMO_MAX_BODY_BYTES, MNEMO_IDEMPOTENCY_TTL_SECONDS (flag --idempotency-ttl-seconds),
MNEMO_CHECKPOINT_MAX_BYTES (flag --checkpoint-max-bytes), MNEMO_API_KEY (mnemo mcp).
`;
