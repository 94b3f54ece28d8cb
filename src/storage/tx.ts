/** @module One write transaction per port operation: BEGIN IMMEDIATE takes the write lock up front. */
import type Database from 'better-sqlite3';

export type Db = Database.Database;

export function writeTx<A extends unknown[], R>(db: Db, fn: (...args: A) => R): (...args: A) => R {
  const t = db.transaction(fn);
  return (...args: A) => t.immediate(...args);
}

export type Statement = Database.Statement;
