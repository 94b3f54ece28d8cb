/** @module A port role answered at once instead of with a promise: how the SQLite statement modules implement it. */

export type Synchronous<T> = { [K in keyof T]: NonNullable<T[K]> extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : T[K] };
