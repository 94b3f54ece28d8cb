// Stats the mount's JavaScript kept for stored files (fs/storage-view.ts), answered on libfuse's own
// threads: a GETATTR by path that hits one needs no hop to the JS thread and back (about 8 of a
// stat's 20 µs here), and is not held up by whatever the JS thread is doing.
//
// The JS side decides what is valid and says so through a few shared counters (fs/kernel-stats.ts):
// an entry is answered only while its `gen` equals the mount's current generation (moved by every
// write to storage and every drop of the view's answers), the path is not held (a working copy or an
// open's retry there), nothing is in flight in the mount's queue, and the JS thread vouched for the
// generation recently. Otherwise the request goes to JavaScript as before.
//
// Every function expects the caller to hold the cache's lock.

#ifndef FUSE_NATIVE_STAT_CACHE_H
#define FUSE_NATIVE_STAT_CACHE_H

#include <stdint.h>
#include <sys/stat.h>

typedef struct fuse_native_stat_cache fuse_native_stat_cache_t;

fuse_native_stat_cache_t *fuse_native_stat_cache_new (void);
void fuse_native_stat_cache_free (fuse_native_stat_cache_t *c);

/** Keeps `st` as the stat of `path`, valid while the mount's generation is `gen`. */
void fuse_native_stat_cache_keep (fuse_native_stat_cache_t *c, const char *path, const struct stat *st, uint32_t gen);

/** Drops the stat kept for `path` (its hold stays). */
void fuse_native_stat_cache_forget (fuse_native_stat_cache_t *c, const char *path);

/** While `path` is held, its stat is never answered here. */
void fuse_native_stat_cache_hold (fuse_native_stat_cache_t *c, const char *path, int held);

/** Copies the stat kept for `path` into `out` if it is of generation `gen` and the path is not held; returns 1 if it did. */
int fuse_native_stat_cache_answer (fuse_native_stat_cache_t *c, const char *path, uint32_t gen, struct stat *out);

/** Stats kept (held paths without a stat not counted). */
uint32_t fuse_native_stat_cache_size (fuse_native_stat_cache_t *c);

#endif
