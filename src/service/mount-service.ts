/**
 * @module The MountService a mount is handed (service/mounts.ts), made from the service: its
 * writes as promises. Today's service answers synchronously, so each write is wrapped in an async
 * arrow; once the service's own methods are async this is a pass-through (and can go).
 */
import type { MountService } from './mounts.js';

/** The service as it may answer: each MountService write returning its value, or a promise of it. */
type Answering<T> = { [K in keyof T]: T[K] extends (...a: infer A) => Promise<infer R> ? (...a: A) => R | Promise<R> : T[K] };

export function mountServiceOf(service: Answering<MountService>): MountService {
  return {
    saveMemoryAt: async (...a) => await service.saveMemoryAt(...a),
    updateMemory: async (...a) => await service.updateMemory(...a),
    moveMemory: async (...a) => await service.moveMemory(...a),
    moveTree: async (...a) => await service.moveTree(...a),
    deleteMemory: async (...a) => await service.deleteMemory(...a),
    setMemoryMode: async (...a) => await service.setMemoryMode(...a),
    setMemoryTimes: async (...a) => await service.setMemoryTimes(...a),
    setMemoryOwner: async (...a) => await service.setMemoryOwner(...a),
    durability: service.durability,
    clock: service.clock,
    ids: service.ids,
    mountReader: service.mountReader,
  };
}
