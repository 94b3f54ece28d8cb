/** @module Wire-shape assertions shared by the API suites: ids, timestamps, objects as the SDK types declare them. */
import { createHash } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import type {
  BetaManagedAgentsMemory,
  BetaManagedAgentsMemoryListItem,
  BetaManagedAgentsMemoryStore,
  BetaManagedAgentsMemoryVersion,
} from '@anthropic-ai/sdk/resources/beta/memory-stores';
import { expect } from 'vitest';

export type Store = BetaManagedAgentsMemoryStore;
export type Memory = BetaManagedAgentsMemory;
export type ListItem = BetaManagedAgentsMemoryListItem;
export type Version = BetaManagedAgentsMemoryVersion;

export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
export const SHA256_HEX = /^[0-9a-f]{64}$/;

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
export const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

export function id(prefix: string) {
  return expect.stringMatching(new RegExp(`^${prefix}[0-9A-Za-z]+$`));
}

export const timestamp = () => expect.stringMatching(RFC3339);

export function expectStore(s: Store): void {
  expect(Object.keys(s).sort()).toEqual(['archived_at', 'created_at', 'description', 'id', 'metadata', 'name', 'type', 'updated_at']);
  expect(s).toMatchObject({ type: 'memory_store', id: id('memstore_'), created_at: timestamp(), updated_at: timestamp() });
  expect(typeof s.name).toBe('string');
  expect(typeof s.description).toBe('string');
  expect(s.metadata).toBeTypeOf('object');
  if (s.archived_at !== null) expect(s.archived_at).toMatch(RFC3339);
}

/** A memory object; `content` is the expected text with view=full, or null with view=basic. */
export function expectMemory(m: Memory, want: { path: string; content: string; storeId: string; view: 'basic' | 'full' }): void {
  expect(Object.keys(m).sort()).toEqual([
    'content', 'content_sha256', 'content_size_bytes', 'created_at', 'id', 'memory_store_id', 'memory_version_id', 'path', 'type', 'updated_at',
  ]);
  expect(m).toEqual({
    type: 'memory',
    id: id('mem_'),
    memory_store_id: want.storeId,
    path: want.path,
    content: want.view === 'full' ? want.content : null,
    content_sha256: sha256(want.content),
    content_size_bytes: bytes(want.content),
    memory_version_id: id('memver_'),
    created_at: timestamp(),
    updated_at: timestamp(),
  });
}

export function expectVersionShape(v: Version): void {
  // content_still_held_by and _in: additive, on a redaction's answer only (README, "Content stored once", "Redaction").
  expect(Object.keys(v).filter((k) => k !== 'content_still_held_by' && k !== 'content_still_held_in').sort()).toEqual([
    'content', 'content_sha256', 'content_size_bytes', 'created_at', 'created_by', 'id', 'memory_id', 'memory_store_id', 'operation', 'path',
    'redacted_at', 'redacted_by', 'type',
  ]);
  expect(v).toMatchObject({
    type: 'memory_version',
    id: id('memver_'),
    memory_store_id: id('memstore_'),
    memory_id: id('mem_'),
    operation: expect.stringMatching(/^(created|modified|deleted)$/),
    created_at: timestamp(),
    created_by: { type: 'api_actor', api_key_id: id('apikey_') },
  });
  if (v.redacted_at === null) expect(v.redacted_by).toBeNull();
  else expect(v.redacted_by).toMatchObject({ type: 'api_actor', api_key_id: id('apikey_') });
}

/** Collects every item of a list through the SDK's auto-pagination. */
export async function collect<T>(pages: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of pages) out.push(item);
  return out;
}

/** Walks a list by hand: `next_page` passed back as `page`, until it is null. Returns the pages. */
export async function walkPages<T>(fetchPage: (page: string | undefined) => Promise<{ data: T[]; next_page: string | null }>): Promise<T[][]> {
  const pages: T[][] = [];
  let page: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const res = await fetchPage(page);
    pages.push(res.data);
    if (res.next_page === null) return pages;
    expect(res.next_page).toMatch(/^page_/);
    page = res.next_page;
  }
  throw new Error('pagination did not end');
}

let counter = 0;
/** A fresh store with a unique name, for tests that need isolation on a shared server. */
export function freshStore(client: Anthropic, name = 'test store'): Promise<Store> {
  counter++;
  return client.beta.memoryStores.create({ name: `${name} ${counter} ${process.pid}` });
}

export function pathOf(item: ListItem): string {
  return item.path;
}
