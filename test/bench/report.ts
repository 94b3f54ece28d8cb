/** @module Formatting the bench report: markdown tables of absolute figures, ratios and targets. */
import { cpus, totalmem } from 'node:os';
import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Check {
  what: string;
  ok: boolean;
  detail: string;
}

export function hostFacts(): string[] {
  const kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  const model = cpus()[0]?.model ?? 'unknown CPU';
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  return [
    `- cores: ${cpus().length} × ${model}`,
    `- memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- kernel: Linux ${kernel}`,
    `- node: ${process.version}`,
    `- load average at start: ${load}`,
    `- fsync of a 4 KiB append in ${tmpdir()} (where the servers keep their data): p50 ${fsyncMs().toFixed(3)} ms`,
  ];
}

/** What one durable commit costs at least on this disk: every mount save and API write pays it. */
function fsyncMs(): number {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-bench-fsync-'));
  const fd = openSync(join(dir, 'probe'), 'w');
  const lat: number[] = [];
  const page = Buffer.alloc(4096, 120);
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    writeSync(fd, page);
    fsyncSync(fd);
    lat.push(performance.now() - t);
  }
  closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
  return lat.sort((a, b) => a - b)[lat.length >> 1]!;
}

export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

export function fmt(n: number, digits = 0): string {
  if (!Number.isFinite(n)) return 'n/a';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function ratio(n: number): string {
  return Number.isFinite(n) ? `${n.toFixed(2)}x` : 'n/a';
}

export function checks(list: Check[]): string {
  if (list.length === 0) return '';
  return list.map((c) => `- ${c.ok ? 'MET ' : 'MISS'} ${c.what}: ${c.detail}`).join('\n');
}
