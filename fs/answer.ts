/**
 * @module Answers that are values when the mount already holds them and promises when it must ask
 * storage (storage-view.ts). `then` continues either way without awaiting a value: an operation
 * answered from memory replies synchronously, as before the reads became promises.
 */

export type Answer<T> = T | Promise<T>;

export function then<T, U>(a: Answer<T>, next: (value: T) => Answer<U>): Answer<U> {
  return a instanceof Promise ? a.then(next) : next(a);
}
