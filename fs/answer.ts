/**
 * @module Answers that are values when the mount already holds them and promises when it must ask
 * storage (storage-view.ts). `after` continues either way without awaiting a value: an operation
 * answered from memory replies synchronously, as before the reads became promises. (Not named
 * `then`: a module exporting `then` is a thenable, and `await import()` of it would call it.)
 */

export type Answer<T> = T | Promise<T>;

export function after<T, U>(a: Answer<T>, next: (value: T) => Answer<U>): Answer<U> {
  return a instanceof Promise ? a.then(next) : next(a);
}
