#define _GNU_SOURCE
#define FUSE_USE_VERSION 31

#include <uv.h>
#include <node_api.h>
#include <napi-macros.h>

#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <assert.h>

#include <fuse.h>
#include <fuse_opt.h>
#include <fuse_common.h>
#include <fuse_lowlevel.h>

#include <unistd.h>
#include <sys/wait.h>
#include <pthread.h>
#include <signal.h>
#include <errno.h>
#include <time.h>
#include <sys/uio.h>
#include <fcntl.h>
#include <linux/fuse.h>

#include "node-tree.h"
#include "stat-cache.h"

static int IS_ARRAY_BUFFER_DETACH_SUPPORTED = 0;

napi_status napi_detach_arraybuffer(napi_env env, napi_value buf);

#define FUSE_NATIVE_CALLBACK(fn, blk)\
  napi_env env = ft->env;\
  napi_handle_scope scope;\
  napi_open_handle_scope(env, &scope);\
  napi_value ctx;\
  napi_get_reference_value(env, ft->ctx, &ctx);\
  napi_value callback;\
  napi_get_reference_value(env, fn, &callback);\
  blk\
  napi_close_handle_scope(env, scope);

#define FUSE_NATIVE_HANDLER(name, blk)\
  fuse_thread_locals_t *l = get_thread_locals();\
  l->op = op_##name;\
  l->op_fn = fuse_native_dispatch_##name;\
  l->path = NULL;\
  l->dest = NULL;\
  blk\
  if (!fuse_native_utf8(l->path) || !fuse_native_utf8(l->dest)) return -EINVAL;\
  uint64_t trace_t0 = l->fuse->config & CONFIG_TRACE ? uv_hrtime() : 0;\
  l->trace_t0 = trace_t0;\
  uv_async_send(&(l->async));\
  uv_sem_wait(&(l->sem));\
  if (l->drop_nodeid) fuse_native_drop_attrs(l);\
  if (trace_t0) fuse_native_traced(l->fuse, op_##name, trace_t0, l->trace_sig);\
  return l->res;

#define FUSE_METHOD(name, callbackArgs, signalArgs, signature, callBlk, callbackBlk, signalBlk)\
  static void fuse_native_dispatch_##name (uv_async_t* handle, fuse_thread_locals_t* l, fuse_thread_t* ft) {\
    uint32_t op = op_##name;\
    if (l->trace_t0) __atomic_fetch_add(&ft->trace_in_ns[op], uv_hrtime() - l->trace_t0, __ATOMIC_RELAXED);\
    FUSE_NATIVE_CALLBACK(ft->handlers[op], {\
      napi_value argv[callbackArgs + 2];\
      napi_get_reference_value(env, l->self, &(argv[0]));\
      napi_create_uint32(env, l->op, &(argv[1]));\
      callbackBlk\
      NAPI_MAKE_CALLBACK(env, NULL, ctx, callback, callbackArgs + 2, argv, NULL)\
    })\
  }\
  NAPI_METHOD(fuse_native_signal_##name) {\
    NAPI_ARGV(signalArgs + 2)\
    NAPI_ARGV_BUFFER_CAST(fuse_thread_locals_t *, l, 0);\
    NAPI_ARGV_INT32(res, 1);\
    signalBlk\
    l->res = res;\
    if (l->trace_t0) l->trace_sig = uv_hrtime();\
    uv_sem_post(&(l->sem));\
    return NULL;\
  }\
  static int fuse_native_##name signature {\
    FUSE_NATIVE_HANDLER(name, callBlk)\
  }

#define FUSE_METHOD_VOID(name, callbackArgs, signalArgs, signature, callBlk, callbackBlk)\
  FUSE_METHOD(name, callbackArgs, signalArgs, signature, callBlk, callbackBlk, {})

#define FUSE_UINT64_TO_INTS_ARGV(n, pos)\
  uint32_t low##pos = n % 4294967296;\
  uint32_t high##pos = (n - low##pos) / 4294967296;\
  napi_create_uint32(env, low##pos, &(argv[pos]));\
  napi_create_uint32(env, high##pos, &(argv[pos + 1]));


// Opcodes

static const uint32_t op_init = 0;
static const uint32_t op_error = 1;
static const uint32_t op_access = 2;
static const uint32_t op_statfs = 3;
static const uint32_t op_fgetattr = 4;
static const uint32_t op_getattr = 5;
static const uint32_t op_flush = 6;
static const uint32_t op_fsync = 7;
static const uint32_t op_fsyncdir = 8;
static const uint32_t op_readdir = 9;
static const uint32_t op_truncate = 10;
static const uint32_t op_ftruncate = 11;
static const uint32_t op_utimens = 12;
static const uint32_t op_readlink = 13;
static const uint32_t op_chown = 14;
static const uint32_t op_chmod = 15;
static const uint32_t op_mknod = 16;
static const uint32_t op_setxattr = 17;
static const uint32_t op_getxattr = 18;
static const uint32_t op_listxattr = 19;
static const uint32_t op_removexattr = 20;
static const uint32_t op_open = 21;
static const uint32_t op_opendir = 22;
static const uint32_t op_read = 23;
static const uint32_t op_write = 24;
static const uint32_t op_release = 25;
static const uint32_t op_releasedir = 26;
static const uint32_t op_create = 27;
static const uint32_t op_unlink = 28;
static const uint32_t op_rename = 29;
static const uint32_t op_link = 30;
static const uint32_t op_symlink = 31;
static const uint32_t op_mkdir = 32;
static const uint32_t op_rmdir = 33;

// Data structures

typedef struct fuse_thread {
  napi_env env;
  pthread_t thread;
  pthread_attr_t attr;
  napi_ref ctx;
  napi_ref malloc;

  // Operation handlers
  napi_ref handlers[35];

  struct fuse *fuse;
  char mnt[1024];
  char mntopts[1024];
  int mounted;

  uv_async_t async;
  uv_mutex_t mut;
  uv_sem_t sem;

  // Cache invalidations, run on threads of their own: the kernel may wait in them for a request
  // that only the JS thread can answer, so the JS thread must never block there. Two queues, each
  // with its thread: [0] a path's attributes and pages (fuse_invalidate_path), which an open's reply
  // waits for; [1] names' entries, for which the kernel takes the directory's lock, which a rename
  // may hold while it waits on libfuse's lock of a path that such an open holds: in one queue, that
  // open would wait behind the entry, and the entry behind the rename, for ever.
  napi_threadsafe_function invalidated;
  struct fuse_native_notify {
    struct fuse_thread *ft;
    pthread_t thread;
    pthread_mutex_t mut;
    pthread_cond_t cond;
    struct fuse_native_inval *head;
    struct fuse_native_inval *tail;
    int stop;
    int started;
  } notify[2];

  // libfuse 3 takes these in init's fuse_config only, not as -o options (CONFIG_* bits).
  uint32_t config;

  // CONFIG_TRACE: requests handed to JS and the nanoseconds each kind held its libfuse thread.
  uint64_t trace_count[35];
  uint64_t trace_ns[35];
  // Of which: from the request's hand-off to its JS dispatch, and from the reply to the thread's wake-up.
  uint64_t trace_in_ns[35];
  uint64_t trace_out_ns[35];

  // What the kernel has open, learnt from the requests and replies that pass (see "Open files").
  int dev_fd;
  pthread_mutex_t open_mut;
  // Requests whose replies teach something, until their reply passes: the node asked about (the
  // directory, for a name), the name(s) and, for a rename, the target directory and its flags.
  struct { uint64_t unique; uint64_t nodeid; uint32_t opcode; uint64_t dir2; uint32_t flags; char name[256]; char name2[256]; } opening[64];
  // Opens the binding turned into an open by name: the handle and the node libfuse counted it on.
  // A slot is taken (`unique`) when the OPEN is rewritten, so every rewritten open has one.
  struct { uint64_t fh; uint64_t nodeid; uint64_t unique; } borrowed[64];
  // libfuse's names, mirrored (node-tree.h), with each node's inode number (use_ino: mnemo's own, a
  // memory's or a directory's) from the LOOKUP, CREATE and MKDIR replies: a rename libfuse would
  // wait on for ever is answered here, and a change made elsewhere, which mnemo knows by memory and
  // directory, finds the node ids and names the kernel's notifications need (see "Cache
  // invalidation"); an OPEN of a node whose name is gone finds the name it had (see "Replaced while
  // opening"), and a request without a handle the one the kernel holds open (see "Open files").
  // Unbounded, as libfuse's own table: tables of 1,024 slots by node id lost the numbers, names and
  // handles of a mount's first files once the kernel knew (or held open) more than that.
  fuse_native_tree_t *tree;

  // Stats kept by the mount's JavaScript, answered here without a hop (stat-cache.h, "Kept stats").
  // The counters JS writes and this side reads: STAT_GEN, STAT_BUSY, STAT_ON (JS views them in place
  // through the thread's buffer, at offsetof_stat_cells).
  int32_t stat_cells[4];
  pthread_mutex_t stats_mut;
  fuse_native_stat_cache_t *stats;
  // When JS last vouched for the generation (uv_hrtime ns), and stats answered here.
  uint64_t stats_vouched;
  uint64_t stats_answered;
} fuse_thread_t;

#define STAT_GEN 0
#define STAT_BUSY 1
#define STAT_ON 2

/** The mount each /dev/fuse descriptor serves (see "Open files"). */
static fuse_thread_t *fuse_native_by_fd[256];

#define CONFIG_USE_INO 1
#define CONFIG_HARD_REMOVE 2
#define CONFIG_TRACE 4

typedef struct fuse_native_inval {
  struct fuse_native_inval *next;
  uint32_t id;
  // 0: the path's attributes and pages (fuse_invalidate_path); 1: the kernel's entry for its name;
  // 2: the entry of the file whose inode number is `ino`, wherever the kernel learnt it; 3: the
  // entry for the name `path` in the directory whose inode number is `ino` (0: the root).
  uint32_t entry;
  uint64_t ino;
  int32_t res;
  char path[];
} fuse_native_inval_t;

typedef struct {
  napi_ref self;

  // Opcode
  uint32_t op;
  void *op_fn;

  // Payloads
  const char *path;
  const char *dest;
  // An OPEN's node's inode number as its lookup gave it (0: unknown, or not an OPEN of a node).
  uint64_t open_ino;
  // The node an OPEN names (0: not an OPEN of a node), and the node whose cached attributes the
  // kernel is told to drop before this request's reply goes out (OPEN_DROP_ATTRS; 0: none).
  uint64_t open_nodeid;
  uint64_t drop_nodeid;
  // A GETATTR's handle was lent by the binding, not sent by the kernel.
  int getattr_lent;
  char *linkname;
  struct fuse_file_info *info;
  const void *buf;
  off_t offset;
  size_t len;
  mode_t mode;
  dev_t dev;
  uid_t uid;
  gid_t gid;
  double atime;
  double mtime;
  int atime_omit;
  int mtime_omit;
  unsigned int rename_flags;
  int32_t res;

  // Extended attributes
  const char *name;
  const char *value;
  char *list;
  size_t size;
  uint32_t position;
  int flags;

  // Stat + Statfs
  struct stat *stat;
  struct statvfs *statvfs;

  // Readdir
  fuse_fill_dir_t readdir_filler;

  // CONFIG_TRACE: when the request was handed to the JS thread, and when JS replied.
  uint64_t trace_t0;
  uint64_t trace_sig;

  // Internal bookkeeping
  fuse_thread_t *fuse;
  uv_sem_t sem;
  uv_async_t async;

  // A create's or mkdir's reply may carry the new node's attributes: libfuse asks for them right
  // after, on this thread (lookup_path in fuse_lib_create, with the new handle; in fuse_lib_mkdir,
  // with the same path and no handle), and they are answered from here instead of by a second hop
  // to the JS thread (see fuse_native_getattr_after_create).
  int created_valid;
  uint64_t created_fh;
  const char *created_path;
  struct stat created_stat;

  // A borrowed open (an OPEN sent on as an open of the name, see "Replaced while opening") is
  // followed by libfuse's lookup of the name, as a create is: answered through this handle.
  int borrowed_valid;
  uint64_t borrowed_fh;

} fuse_thread_locals_t;

static pthread_key_t thread_locals_key;

/**
 * The inode number of the node an OPEN read on this libfuse thread names, as the kernel's lookup
 * was told it (0: not noted). libfuse's high-level open passes only a path, and the file at that
 * path may not be the one the kernel resolved: the JS handler is told which one was (fs/ops.ts, an
 * open whose file was deleted between the kernel's lookup and its open). Each libfuse thread reads
 * a request and then handles it, so a thread-local carries it from one to the other.
 */
static __thread uint64_t fuse_native_open_ino = 0;
/** The node id of that OPEN, read with it (0: none). */
static __thread uint64_t fuse_native_open_nodeid = 0;

/**
 * The GETATTR read on this libfuse thread came without a handle and the binding lent it one (see
 * "Open files"): an fstat, or a stat by path of a file that is open. A handle the kernel sent
 * itself is a read's or a seek's size check through that very descriptor. JS answers the two apart.
 */
static __thread int fuse_native_getattr_lent = 0;
static fuse_thread_locals_t* get_thread_locals();
static void fuse_native_drop_attrs (fuse_thread_locals_t *l);

static void fuse_native_traced (fuse_thread_t *ft, uint32_t op, uint64_t t0, uint64_t replied) {
  uint64_t now = uv_hrtime();
  __atomic_fetch_add(&ft->trace_count[op], 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&ft->trace_ns[op], now - t0, __ATOMIC_RELAXED);
  __atomic_fetch_add(&ft->trace_out_ns[op], now - replied, __ATOMIC_RELAXED);
}

/**
 * trace(thread, out): copies into `out` (4 × 35 uint64) the per-op request counts, the nanoseconds
 * they held their libfuse threads, and of those the hand-off to JS and the wake-up after the reply.
 */
NAPI_METHOD(fuse_native_trace) {
  NAPI_ARGV(2)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0);
  NAPI_ARGV_BUFFER_CAST(uint64_t *, out, 1);
  for (int i = 0; i < 35; i++) {
    out[i] = __atomic_load_n(&ft->trace_count[i], __ATOMIC_RELAXED);
    out[35 + i] = __atomic_load_n(&ft->trace_ns[i], __ATOMIC_RELAXED);
    out[70 + i] = __atomic_load_n(&ft->trace_in_ns[i], __ATOMIC_RELAXED);
    out[105 + i] = __atomic_load_n(&ft->trace_out_ns[i], __ATOMIC_RELAXED);
  }
  return NULL;
}

// Helpers
// TODO: Extract into a separate file.

static uint64_t uint32s_to_uint64 (uint32_t **ints) {
  uint64_t low = *((*ints)++);
  uint64_t high = *((*ints)++);
  return high * 4294967296 + low;
}

static void uint32s_to_timespec (struct timespec* ts, uint32_t** ints) {
  ts->tv_sec = (time_t) uint32s_to_uint64(ints);
  ts->tv_nsec = *((*ints)++);
}

/** A path for JS: null when libfuse passes none (an op through a handle on an unlinked file). */
static void fuse_native_path (napi_env env, const char *path, napi_value *out) {
  if (path == NULL) napi_get_null(env, out);
  else napi_create_string_utf8(env, path, NAPI_AUTO_LENGTH, out);
}

/**
 * True if `s` is NULL or well-formed UTF-8 (no overlongs, surrogates or code points past
 * U+10FFFF). A name that is not would reach JS as U+FFFD and alias every other such name.
 */
static int fuse_native_utf8 (const char *s) {
  if (s == NULL) return 1;
  const unsigned char *p = (const unsigned char *) s;
  while (*p) {
    unsigned char c = *p;
    if (c < 0x80) { p++; continue; }
    int n;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) { n = 1; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { n = 2; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 3; cp = c & 0x07; }
    else return 0;
    for (int i = 1; i <= n; i++) {
      if ((p[i] & 0xc0) != 0x80) return 0;
      cp = (cp << 6) | (p[i] & 0x3f);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    p += n + 1;
  }
  return 1;
}

/**
 * A time for JS in milliseconds with whole microseconds (mnemo keeps times to the microsecond), with
 * UTIME_NOW resolved to the current time. The nanoseconds are cut, as the kernel cuts a time to a
 * coarser granularity (timestamp_truncate): rounded, .9999996 s became the next second, and a copy
 * made by `cp -p` was newer than its source. A double near today holds about a quarter of a
 * microsecond, so JS rounds it back to this exact microsecond (fs/binding/fuse.ts setTime).
 */
static double fuse_native_time_ms (const struct timespec *ts, int *omit) {
  *omit = ts->tv_nsec == UTIME_OMIT;
  struct timespec t = *ts;
  if (ts->tv_nsec == UTIME_NOW) clock_gettime(CLOCK_REALTIME, &t);
  return (double) t.tv_sec * 1000.0 + (double) (t.tv_nsec / 1000) / 1000.0;
}

static void fuse_native_fh (napi_env env, struct fuse_file_info *info, napi_value *out) {
  napi_create_uint32(env, info != NULL ? (uint32_t) info->fh : 0, out);
}

static void populate_stat (uint32_t *ints, struct stat* stat) {
  stat->st_mode = *ints++;
  stat->st_uid = *ints++;
  stat->st_gid = *ints++;
  stat->st_size = uint32s_to_uint64(&ints);
  stat->st_dev = *ints++;
  stat->st_nlink = *ints++;
  // Two words, where fuse-native had st_ino and st_rdev: mnemo's inode numbers are 53-bit hashes
  // (fs/stat.ts inoOf), and it shows no device files.
  stat->st_ino = uint32s_to_uint64(&ints);
  stat->st_rdev = 0;
  stat->st_blksize = *ints++;
  stat->st_blocks = uint32s_to_uint64(&ints);
#ifdef __APPLE__
  uint32s_to_timespec(&stat->st_atimespec, &ints);
  uint32s_to_timespec(&stat->st_mtimespec, &ints);
  uint32s_to_timespec(&stat->st_ctimespec, &ints);
#else
  uint32s_to_timespec(&stat->st_atim, &ints);
  uint32s_to_timespec(&stat->st_mtim, &ints);
  uint32s_to_timespec(&stat->st_ctim, &ints);
#endif
}

static void populate_statvfs (uint32_t *ints, struct statvfs* statvfs) {
  statvfs->f_bsize = *ints++;
  statvfs->f_frsize = *ints++;
  statvfs->f_blocks = *ints++;
  statvfs->f_bfree = *ints++;
  statvfs->f_bavail = *ints++;
  statvfs->f_files = *ints++;
  statvfs->f_ffree = *ints++;
  statvfs->f_favail = *ints++;
  statvfs->f_fsid = *ints++;
  statvfs->f_flag = *ints++;
  statvfs->f_namemax = *ints++;
}

// Methods

FUSE_METHOD(statfs, 1, 1, (const char * path, struct statvfs *statvfs), {
  l->path = path;
  l->statvfs = statvfs;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
}, {
  NAPI_ARGV_BUFFER_CAST(uint32_t*, ints, 2)
  populate_statvfs(ints, l->statvfs);
})

/**
 * Keeps the new node's attributes from a successful create's or mkdir's reply (`st`, a stat array as
 * getattr's, or nothing) for the getattr libfuse makes right after it on this thread: by the new
 * handle (`fh`, create) or by the same path (`path`, mkdir). See fuse_native_getattr_after_create.
 */
static void fuse_native_keep_created (napi_env env, fuse_thread_locals_t *l, int32_t res, napi_value st, uint64_t fh, const char *path) {
  napi_valuetype type;
  uint32_t *ints;
  size_t len;
  l->created_valid = 0;
  if (res != 0 || napi_typeof(env, st, &type) != napi_ok || type != napi_object) return;
  if (napi_get_buffer_info(env, st, (void **) &ints, &len) != napi_ok) return;
  memset(&l->created_stat, 0, sizeof(l->created_stat));
  populate_stat(ints, &l->created_stat);
  l->created_fh = fh;
  l->created_path = path;
  l->created_valid = 1;
}

FUSE_METHOD(getattr, 3, 1, (const char *path, struct stat *stat, struct fuse_file_info *info), {
  l->path = path;
  l->stat = stat;
  l->info = info;
  l->getattr_lent = fuse_native_getattr_lent;
  fuse_native_getattr_lent = 0;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  fuse_native_fh(env, l->info, &(argv[3]));
  napi_get_boolean(env, l->getattr_lent != 0, &(argv[4]));
}, {
  NAPI_ARGV_BUFFER_CAST(uint32_t*, ints, 2)
  populate_stat(ints, l->stat);
})

FUSE_METHOD_VOID(access, 2, 0, (const char *path, int mode), {
  l->path = path;
  l->mode = mode;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
})

FUSE_METHOD(open, 3, 2, (const char *path, struct fuse_file_info *info), {
  l->path = path;
  l->info = info;
  // Noted by this thread as it read the OPEN (fuse_native_io_read_one); an open by name has none.
  l->open_ino = fuse_native_open_ino;
  l->open_nodeid = fuse_native_open_nodeid;
  fuse_native_open_ino = 0;
  fuse_native_open_nodeid = 0;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->flags, &(argv[3]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
  }
  napi_create_double(env, (double) l->open_ino, &(argv[4]));
}, {
  NAPI_ARGV_INT32(fd, 2)
  NAPI_ARGV_UINT32(open_flags, 3)
  if (fd != 0) {
    l->info->fh = fd;
  }
  l->info->direct_io = (open_flags & 1) ? 1 : 0;
  l->info->keep_cache = (open_flags & 2) ? 1 : 0;
  l->info->noflush = (open_flags & 4) ? 1 : 0;
  l->drop_nodeid = (open_flags & 8) ? l->open_nodeid : 0;
})

FUSE_METHOD(opendir, 3, 1, (const char *path, struct fuse_file_info *info), {
  l->path = path;
  l->info = info;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[3]));
    napi_create_uint32(env, l->info->flags, &(argv[4]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
    napi_create_uint32(env, 0, &(argv[4]));
  }
}, {
  NAPI_ARGV_INT32(fd, 2)
  if (fd != 0) {
    l->info->fh = fd;
  }
})

FUSE_METHOD(create, 5, 3, (const char *path, mode_t mode, struct fuse_file_info *info), {
  l->path = path;
  l->mode = mode;
  l->info = info;
  // The caller's ids (read on the request's own thread): a new file belongs to its creator.
  l->uid = fuse_get_context()->uid;
  l->gid = fuse_get_context()->gid;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
  napi_create_uint32(env, l->info != NULL ? (uint32_t) l->info->flags : 0, &(argv[4]));
  napi_create_uint32(env, l->uid, &(argv[5]));
  napi_create_uint32(env, l->gid, &(argv[6]));
}, {
  NAPI_ARGV_INT32(fd, 2)
  NAPI_ARGV_UINT32(open_flags, 3)
  if (fd != 0) {
    l->info->fh = fd;
  }
  l->info->direct_io = (open_flags & 1) ? 1 : 0;
  l->info->keep_cache = (open_flags & 2) ? 1 : 0;
  l->info->noflush = (open_flags & 4) ? 1 : 0;
  fuse_native_keep_created(env, l, res, argv[4], l->info->fh, NULL);
})

// Kept stats
//
// A stat by path (a LOOKUP's, or a GETATTR without a handle) of a file whose stat the mount's
// JavaScript kept is answered here, on the libfuse thread, when JS's own fast path would answer it
// from its view (fs/ops.ts getattr): nothing in flight in the mount's queue (STAT_BUSY), the view
// holds no pending expiry (STAT_ON), the stat is of the current generation (every storage write and
// every drop of the view moves STAT_GEN), the path has no working copy or retried open (held), and
// JS vouched within STAT_VOUCH_NS, so another process's commits (which JS notices by polling) are
// not missed for longer than that while the JS thread is busy. Otherwise it goes to JS as before.

#define STAT_VOUCH_NS 150000000ULL

/** Runs `stmt` on the mount's kept stats under their lock; nothing once the mount's loop ended and freed them. */
#define WITH_STATS(ft, stmt) do {\
  pthread_mutex_lock(&(ft)->stats_mut);\
  if ((ft)->stats != NULL) { stmt; }\
  pthread_mutex_unlock(&(ft)->stats_mut);\
} while (0)

static int fuse_native_kept_stat (fuse_thread_t *ft, const char *path, struct stat *out) {
  if (__atomic_load_n(&ft->stat_cells[STAT_ON], __ATOMIC_ACQUIRE) == 0) return 0;
  if (__atomic_load_n(&ft->stat_cells[STAT_BUSY], __ATOMIC_ACQUIRE) != 0) return 0;
  if (uv_hrtime() - __atomic_load_n(&ft->stats_vouched, __ATOMIC_ACQUIRE) > STAT_VOUCH_NS) return 0;
  int found = 0;
  uint32_t gen = (uint32_t) __atomic_load_n(&ft->stat_cells[STAT_GEN], __ATOMIC_ACQUIRE);
  WITH_STATS(ft, found = fuse_native_stat_cache_answer(ft->stats, path, gen, out));
  if (found) __atomic_fetch_add(&ft->stats_answered, 1, __ATOMIC_RELAXED);
  return found;
}

NAPI_METHOD(fuse_native_stat_keep) {
  NAPI_ARGV(4)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0);
  NAPI_ARGV_UTF8(path, 4096, 1);
  NAPI_ARGV_BUFFER_CAST(uint32_t *, ints, 2);
  NAPI_ARGV_UINT32(gen, 3);
  struct stat st;
  memset(&st, 0, sizeof(st));
  populate_stat(ints, &st);
  WITH_STATS(ft, fuse_native_stat_cache_keep(ft->stats, path, &st, gen));
  return NULL;
}

NAPI_METHOD(fuse_native_stat_forget) {
  NAPI_ARGV(2)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0);
  NAPI_ARGV_UTF8(path, 4096, 1);
  WITH_STATS(ft, fuse_native_stat_cache_forget(ft->stats, path));
  return NULL;
}

NAPI_METHOD(fuse_native_stat_hold) {
  NAPI_ARGV(3)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0);
  NAPI_ARGV_UTF8(path, 4096, 1);
  NAPI_ARGV_UINT32(held, 2);
  WITH_STATS(ft, fuse_native_stat_cache_hold(ft->stats, path, held != 0));
  return NULL;
}

NAPI_METHOD(fuse_native_stat_vouch) {
  NAPI_ARGV(1)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0);
  __atomic_store_n(&ft->stats_vouched, uv_hrtime(), __ATOMIC_RELEASE);
  return NULL;
}

/** Stats answered here so far, and stats kept now. */
NAPI_METHOD(fuse_native_stat_info) {
  NAPI_ARGV(2)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0);
  NAPI_ARGV_BUFFER_CAST(double *, out, 1);
  out[0] = (double) __atomic_load_n(&ft->stats_answered, __ATOMIC_RELAXED);
  out[1] = 0;
  WITH_STATS(ft, out[1] = (double) fuse_native_stat_cache_size(ft->stats));
  return NULL;
}

/**
 * getattr, answered from a create's or mkdir's reply when it is the one libfuse makes right after
 * it (same thread; the new handle, or the same path without one): one hop to the JS thread fewer
 * for every new file and directory. Any other getattr on the thread drops what the reply left.
 */
static int fuse_native_getattr_after_create (const char *path, struct stat *stat, struct fuse_file_info *info) {
  fuse_thread_locals_t *l = get_thread_locals();
  if (l->borrowed_valid) {
    l->borrowed_valid = 0;
    // By the handle, not the path: the file opened may have left the name since (deleted by another
    // session or the API), and a stat by path then failed the whole open with ENOENT.
    if (info != NULL && info->fh == l->borrowed_fh) return fuse_native_getattr(NULL, stat, info);
  }
  if (l->created_valid) {
    l->created_valid = 0;
    int same = l->created_path == NULL
      ? info != NULL && info->fh == l->created_fh
      : info == NULL && path != NULL && strcmp(path, l->created_path) == 0;
    if (same) {
      *stat = l->created_stat;
      return 0;
    }
  }
  if (info == NULL && path != NULL && fuse_native_getattr_lent == 0 && fuse_native_kept_stat(l->fuse, path, stat)) return 0;
  return fuse_native_getattr(path, stat, info);
}

FUSE_METHOD_VOID(utimens, 4, 0, (const char *path, const struct timespec tv[2], struct fuse_file_info *info), {
  l->path = path;
  l->info = info;
  l->atime = fuse_native_time_ms(&tv[0], &l->atime_omit);
  l->mtime = fuse_native_time_ms(&tv[1], &l->mtime_omit);
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  if (l->atime_omit) napi_get_null(env, &(argv[3]));
  else napi_create_double(env, l->atime, &(argv[3]));
  if (l->mtime_omit) napi_get_null(env, &(argv[4]));
  else napi_create_double(env, l->mtime, &(argv[4]));
  fuse_native_fh(env, l->info, &(argv[5]));
})

FUSE_METHOD_VOID(release, 2, 0, (const char *path, struct fuse_file_info *info), {
  l->path = path;
  l->info = info;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[3]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
  }
})

FUSE_METHOD_VOID(releasedir, 2, 0, (const char *path, struct fuse_file_info *info), {
  l->path = path;
  l->info = info;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[3]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
  }
})

FUSE_METHOD(read, 6, 2, (const char *path, char *buf, size_t len, off_t offset, struct fuse_file_info *info), {
  l->path = path;
  l->buf = buf;
  l->len = len;
  l->offset = offset;
  l->info = info;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_uint32(env, l->info->fh, &(argv[3]));
  napi_create_external_buffer(env, l->len, (char *) l->buf, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, l->len, &(argv[5]));
  FUSE_UINT64_TO_INTS_ARGV(l->offset, 6)
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[3]) == napi_ok);
})

FUSE_METHOD(write, 6, 2, (const char *path, const char *buf, size_t len, off_t offset, struct fuse_file_info *info), {
  l->path = path;
  l->buf = buf;
  l->len = len;
  l->offset = offset;
  l->info = info;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_uint32(env, l->info->fh, &(argv[3]));
  napi_create_external_buffer(env, l->len, (char *) l->buf, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, l->len, &(argv[5]));
  FUSE_UINT64_TO_INTS_ARGV(l->offset, 6)
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[3]) == napi_ok);
})

FUSE_METHOD(readdir, 1, 2, (const char *path, void *buf, fuse_fill_dir_t filler, off_t offset, struct fuse_file_info *info, enum fuse_readdir_flags rflags), {
  l->buf = buf;
  // A directory removed while open has no path any more: opendir kept it in the handle.
  l->path = path != NULL ? path : (const char *) (uintptr_t) info->fh;
  l->offset = offset;
  l->info = info;
  l->readdir_filler = filler;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
}, {
  uint32_t stats_length = 0;
  uint32_t names_length = 0;
  napi_get_array_length(env, argv[2], &names_length);

  napi_value raw_names = argv[2];
  napi_value raw_stats = argv[3];

  // Each name's d_type in a Buffer (fs/binding/fuse.ts DirEntries): libfuse takes the entry's type
  // from st_mode, so `find -type f` and `os.scandir` need no stat per entry. st_ino stays libfuse's
  // "unknown" (its own for an entry given no stat): a stat gives the inode number.
  bool typed = false;
  napi_is_buffer(env, raw_stats, &typed);
  if (!typed) napi_get_array_length(env, raw_stats, &stats_length);
  if (typed) {
    NAPI_BUFFER_CAST(uint8_t *, types, raw_stats)
    struct stat st;
    memset(&st, 0, sizeof(st));
    NAPI_FOR_EACH(raw_names, raw_name) {
      NAPI_UTF8(name, 1024, raw_name)
      st.st_mode = i < types_len ? ((mode_t) types[i]) << 12 : 0;
      st.st_ino = 0xffffffff;
      if (l->readdir_filler((char *) l->buf, name, &st, 0, 0) == 1) break;
    }
  } else if (names_length != stats_length) {
    NAPI_FOR_EACH(raw_names, raw_name) {
      NAPI_UTF8(name, 1024, raw_name)
      int err = l->readdir_filler((char *) l->buf, name, NULL, 0, 0);
      if (err == 1) {
        break;
      }
    }
  } else {
    NAPI_FOR_EACH(raw_names, raw_name) {
      NAPI_UTF8(name, 1024, raw_name)
      napi_value raw_stat;
      napi_get_element(env, raw_stats, i, &raw_stat);

      NAPI_BUFFER_CAST(uint32_t*, stats_array, raw_stat);
      struct stat st;
      populate_stat(stats_array, &st);

      // TODO: It turns out readdirplus likely won't work with FUSE 29...
      // Metadata caching between readdir/getattr will be enabled when we upgrade fuse-shared-library
      int err = l->readdir_filler((char *) l->buf, name, (struct stat *) &st, 0, 0);
      if (err == 1) {
        break;
      }
    }
  }
})

#ifdef __APPLE__

FUSE_METHOD(setxattr, 5, 1, (const char *path, const char *name, const char *value, size_t size, int flags, uint32_t position), {
  l->path = path;
  l->name = name;
  l->value = value;
  l->size = size;
  l->flags = flags;
  l->position = position;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_string_utf8(env, l->name, NAPI_AUTO_LENGTH, &(argv[3]));
  napi_create_external_buffer(env, l->size, (char *) l->value, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, l->position, &(argv[5]));
  napi_create_uint32(env, l->flags, &(argv[6]));
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[2]) == napi_ok);
})

FUSE_METHOD(getxattr, 4, 1, (const char *path, const char *name, char *value, size_t size, uint32_t position), {
  l->path = path;
  l->name = name;
  l->value = value;
  l->size = size;
  l->position = position;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_string_utf8(env, l->name, NAPI_AUTO_LENGTH, &(argv[3]));
  napi_create_external_buffer(env, l->size, (char *) l->value, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, l->position, &(argv[5]));
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[2]) == napi_ok);
})

#else

FUSE_METHOD(setxattr, 5, 1, (const char *path, const char *name, const char *value, size_t size, int flags), {
  l->path = path;
  l->name = name;
  l->value = value;
  l->size = size;
  l->flags = flags;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_string_utf8(env, l->name, NAPI_AUTO_LENGTH, &(argv[3]));
  napi_create_external_buffer(env, l->size, (char *) l->value, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, 0, &(argv[5])); // normalize apis between mac and linux
  napi_create_uint32(env, l->flags, &(argv[6]));
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[2]) == napi_ok);
})

FUSE_METHOD(getxattr, 4, 1, (const char *path, const char *name, char *value, size_t size), {
  l->path = path;
  l->name = name;
  l->value = value;
  l->size = size;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_string_utf8(env, l->name, NAPI_AUTO_LENGTH, &(argv[3]));
  napi_create_external_buffer(env, l->size, (char *) l->value, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, 0, &(argv[5]));
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[2]) == napi_ok);
})

#endif

FUSE_METHOD(listxattr, 2, 1, (const char *path, char *list, size_t size), {
  l->path = path;
  l->list = list;
  l->size = size;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_external_buffer(env, l->size, l->list, NULL, NULL, &(argv[3]));
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[2]) == napi_ok);
})

FUSE_METHOD_VOID(removexattr, 2, 0, (const char *path, const char *name), {
  l->path = path;
  l->name = name;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_string_utf8(env, l->name, NAPI_AUTO_LENGTH, &(argv[3]));
})

FUSE_METHOD_VOID(flush, 2, 0, (const char *path, struct fuse_file_info *info), {
  l->path = path;
  l->info = info;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[3]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
  }
})

FUSE_METHOD_VOID(fsync, 3, 0, (const char *path, int datasync, struct fuse_file_info *info), {
  l->path = path;
  l->mode = datasync;
  l->info = info;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[4]));
  } else {
    napi_create_uint32(env, 0, &(argv[4]));
  }
})

FUSE_METHOD_VOID(fsyncdir, 3, 0, (const char *path, int datasync, struct fuse_file_info *info), {
  // As readdir: opendir kept the directory's path in the handle, which JS never sees.
  l->path = path != NULL ? path : (const char *) (uintptr_t) info->fh;
  l->mode = datasync;
  l->info = info;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
  napi_create_uint32(env, 0, &(argv[4]));
})


FUSE_METHOD_VOID(truncate, 3, 0, (const char *path, off_t size), {
  l->path = path;
  l->offset = size;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  FUSE_UINT64_TO_INTS_ARGV(l->offset, 3)
})

FUSE_METHOD_VOID(ftruncate, 4, 0, (const char *path, off_t size, struct fuse_file_info *info), {
  l->path = path;
  l->offset = size;
  l->info = info;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[3]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
  }
  FUSE_UINT64_TO_INTS_ARGV(l->offset, 4)
})

/** A create without O_CREAT is the binding's own, an open by name (see "Replaced while opening"). */
static int fuse_native_create_or_open (const char *path, mode_t mode, struct fuse_file_info *info) {
  if (info->flags & O_CREAT) return fuse_native_create(path, mode, info);
  int res = fuse_native_open(path, info);
  if (res == 0) {
    fuse_thread_locals_t *l = get_thread_locals();
    l->borrowed_valid = 1;
    l->borrowed_fh = info->fh;
  }
  return res;
}

/** opendir keeps the directory's path for readdir (libfuse passes none once it was removed). */
static int fuse_native_opendir_keep (const char *path, struct fuse_file_info *info) {
  if (!fuse_native_utf8(path)) return -EINVAL;
  char *copy = strdup(path);
  if (copy == NULL) return -ENOMEM;
  info->fh = (uint64_t) (uintptr_t) copy;
  return 0;
}

static int fuse_native_releasedir_keep (const char *path, struct fuse_file_info *info) {
  free((void *) (uintptr_t) info->fh);
  return 0;
}

static int fuse_native_truncate3 (const char *path, off_t size, struct fuse_file_info *info) {
  if (info != NULL) return fuse_native_ftruncate(path, size, info);
  return fuse_native_truncate(path, size);
}

FUSE_METHOD(readlink, 1, 1, (const char *path, char *linkname, size_t len), {
  l->path = path;
  l->linkname = linkname;
  l->len = len;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
}, {
  NAPI_ARGV_UTF8(linkname, l->len, 2)
  strncpy(l->linkname, linkname, l->len);
})

FUSE_METHOD_VOID(chown, 4, 0, (const char *path, uid_t uid, gid_t gid, struct fuse_file_info *info), {
  l->path = path;
  l->uid = uid;
  l->gid = gid;
  l->info = info;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_int32(env, l->uid == (uid_t) -1 ? -1 : (int32_t) l->uid, &(argv[3]));
  napi_create_int32(env, l->gid == (gid_t) -1 ? -1 : (int32_t) l->gid, &(argv[4]));
  fuse_native_fh(env, l->info, &(argv[5]));
})

FUSE_METHOD_VOID(chmod, 3, 0, (const char *path, mode_t mode, struct fuse_file_info *info), {
  l->path = path;
  l->mode = mode;
  l->info = info;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
  fuse_native_fh(env, l->info, &(argv[4]));
})

FUSE_METHOD_VOID(mknod, 3, 0, (const char *path, mode_t mode, dev_t dev), {
  l->path = path;
  l->mode = mode;
  l->dev = dev;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
  napi_create_uint32(env, l->dev, &(argv[4]));
})

FUSE_METHOD_VOID(unlink, 1, 0, (const char *path), {
  l->path = path;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
})

FUSE_METHOD_VOID(rename, 3, 0, (const char *path, const char *dest, unsigned int flags), {
  l->path = path;
  l->dest = dest;
  l->rename_flags = flags;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  fuse_native_path(env, l->dest, &(argv[3]));
  napi_create_uint32(env, l->rename_flags, &(argv[4]));
})

FUSE_METHOD_VOID(link, 2, 0, (const char *path, const char *dest), {
  l->path = path;
  l->dest = dest;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  fuse_native_path(env, l->dest, &(argv[3]));
})

FUSE_METHOD_VOID(symlink, 2, 0, (const char *path, const char *dest), {
  l->path = fuse_native_utf8(path) ? path : "?";
  l->dest = dest;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  fuse_native_path(env, l->dest, &(argv[3]));
})

FUSE_METHOD(mkdir, 4, 1, (const char *path, mode_t mode), {
  l->path = path;
  l->mode = mode;
  l->uid = fuse_get_context()->uid;
  l->gid = fuse_get_context()->gid;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
  napi_create_uint32(env, l->uid, &(argv[4]));
  napi_create_uint32(env, l->gid, &(argv[5]));
}, {
  fuse_native_keep_created(env, l, res, argv[2], 0, l->path);
})

FUSE_METHOD_VOID(rmdir, 1, 0, (const char *path), {
  l->path = path;
}, {
  fuse_native_path(env, l->path, &(argv[2]));
})

static void fuse_native_dispatch_init (uv_async_t* handle, fuse_thread_locals_t* l, fuse_thread_t* ft) {\
  FUSE_NATIVE_CALLBACK(ft->handlers[op_init], {
    napi_value argv[2];

    napi_get_reference_value(env, l->self, &(argv[0]));
    napi_create_uint32(env, l->op, &(argv[1]));

    NAPI_MAKE_CALLBACK(env, NULL, ctx, callback, 2, argv, NULL);
  })
}

NAPI_METHOD(fuse_native_signal_init) {
  NAPI_ARGV(2)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_locals_t *, l, 0);
  NAPI_ARGV_INT32(res, 1);
  l->res = res;
  uv_sem_post(&(l->sem));
  return NULL;
}

static void * fuse_native_init (struct fuse_conn_info *conn, struct fuse_config *cfg) {
  // Handle ops (read, write, flush, release, fstat…) get the file's path while it has one, and
  // none (NULL) once it was unlinked or replaced while open (hard_remove): then the handle names it.
  cfg->nullpath_ok = 0;
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  cfg->use_ino = (ft->config & CONFIG_USE_INO) ? 1 : 0;
  cfg->hard_remove = (ft->config & CONFIG_HARD_REMOVE) ? 1 : 0;
  // O_TRUNC reaches open() instead of a separate truncate.
  if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC) conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
  fuse_thread_locals_t *l = get_thread_locals();

  l->op = op_init;
  l->op_fn = fuse_native_dispatch_init;

  uv_async_send(&(l->async));
  uv_sem_wait(&(l->sem));

  return l->fuse;
}

// Top-level dispatcher

static void fuse_native_dispatch (uv_async_t* handle) {
  fuse_thread_locals_t *l = (fuse_thread_locals_t *) handle->data;
  fuse_thread_t *ft = l->fuse;
  void (*fn)(uv_async_t *, fuse_thread_locals_t *, fuse_thread_t *) = l->op_fn;

  fn(handle, l, ft);
}

static void fuse_native_async_init (uv_async_t* handle) {
  fuse_thread_t *ft = (fuse_thread_t *) handle->data;
  fuse_thread_locals_t *l;

  FUSE_NATIVE_CALLBACK(ft->malloc, {
    napi_value argv[1];
    napi_create_uint32(ft->env, (uint32_t) sizeof(fuse_thread_locals_t), &(argv[0]));

    napi_value buf;
    NAPI_MAKE_CALLBACK(ft->env, NULL, ctx, callback, 1, argv, &buf);

    size_t l_len;

    napi_get_buffer_info(env, buf, (void **) &l, &l_len);
    napi_create_reference(env, buf, 1, &(l->self));
  })


  int err = uv_async_init(uv_default_loop(), &(l->async), (uv_async_cb) fuse_native_dispatch);
  assert(err >= 0);

  uv_unref((uv_handle_t *) &(l->async));

  uv_sem_init(&(l->sem), 0);
  l->async.data = l;
  ft->async.data = l;
  l->fuse = ft;

  uv_sem_post(&(ft->sem));
}

static fuse_thread_locals_t* get_thread_locals () {
  struct fuse_context *ctx = fuse_get_context();
  fuse_thread_t *ft = (fuse_thread_t *) ctx->private_data;

  void *data = pthread_getspecific(thread_locals_key);

  if (data != NULL) {
    return (fuse_thread_locals_t *) data;
  }

  // Need to lock the mutation of l->async.
  uv_mutex_lock(&(ft->mut));
  ft->async.data = ft;

  // Notify the main thread to uv_async_init l->async.
  uv_async_send(&(ft->async));
  uv_sem_wait(&(ft->sem));

  fuse_thread_locals_t *l = (fuse_thread_locals_t*) ft->async.data;

  pthread_setspecific(thread_locals_key, (void *) l);
  uv_mutex_unlock(&(ft->mut));

  return l;
}

static void* start_fuse_thread (void *data) {
  fuse_thread_t *ft = (fuse_thread_t *) data;
  // Named so that its workers, which inherit the name, can be told apart (a test reads their masks).
  pthread_setname_np(pthread_self(), "mnemo-fuse");
  fuse_loop_mt(ft->fuse, 0);

  // The loop ends when the kernel connection goes (fusermount -u from JS). The notifiers may still
  // hold the fuse handle: stop them before the handle is freed.
  for (int i = 0; i < 2; i++) {
    struct fuse_native_notify *q = &ft->notify[i];
    pthread_mutex_lock(&q->mut);
    q->stop = 1;
    pthread_cond_signal(&q->cond);
    pthread_mutex_unlock(&q->mut);
    if (q->started) pthread_join(q->thread, NULL);
  }

  fuse_unmount(ft->fuse);
  if (ft->dev_fd >= 0 && ft->dev_fd < 256 && fuse_native_by_fd[ft->dev_fd] == ft) fuse_native_by_fd[ft->dev_fd] = NULL;
  fuse_destroy(ft->fuse);
  pthread_mutex_lock(&ft->open_mut);
  fuse_native_tree_free(ft->tree);
  ft->tree = NULL;
  pthread_mutex_unlock(&ft->open_mut);
  pthread_mutex_lock(&ft->stats_mut);
  fuse_native_stat_cache_free(ft->stats);
  ft->stats = NULL;
  pthread_mutex_unlock(&ft->stats_mut);

  return NULL;
}

// Open files
//
// With hard_remove, libfuse forgets a file's path the moment it is unlinked or replaced, and the
// kernel sends fstat, fchmod and futimens without a file handle: libfuse would answer ESTALE for
// a file that is deleted but still open, before mnemo hears of it. So the binding reads and writes
// /dev/fuse itself (fuse_session_custom_io), learns which file handle the kernel holds for each
// node (from OPEN and CREATE replies, and the handle every read, write, flush and fsync carries;
// kept with the node in the node mirror), and adds that handle to a GETATTR or SETATTR that came
// without one. libfuse then passes the handle (and, the file having no path, a null one) and the
// handler answers from the open file.

static fuse_thread_t *fuse_native_mount_of (int fd) {
  return (fd >= 0 && fd < 256) ? fuse_native_by_fd[fd] : NULL;
}

// Up to four handles per node, kept in the node mirror: any one of them names the file, and a
// handle released meanwhile is answered ESTALE by JS.
static void fuse_native_learn (fuse_thread_t *ft, uint64_t nodeid, uint64_t fh) {
  pthread_mutex_lock(&ft->open_mut);
  fuse_native_tree_hold_fh(ft->tree, nodeid, fh);
  pthread_mutex_unlock(&ft->open_mut);
}

static void fuse_native_forget_fh (fuse_thread_t *ft, uint64_t nodeid, uint64_t fh) {
  pthread_mutex_lock(&ft->open_mut);
  fuse_native_tree_drop_fh(ft->tree, nodeid, fh);
  pthread_mutex_unlock(&ft->open_mut);
}

// MNEMO_FUSE_TRACE set (to any file: fs/binding/trace.ts): each request's opcode, node and the handle lent to it are kept in a ring, and
// a reply of ESTALE is logged with them and the node's handle table (to see which branch sent it).
static int estale_log = -1;
static struct { uint64_t unique; uint64_t nodeid; uint64_t lent; uint64_t fh[4]; uint32_t opcode; int had_fh; uint64_t name_node; uint64_t parent; int gone; char name[64]; } estale_ring[512];
static pthread_mutex_t estale_ring_mut = PTHREAD_MUTEX_INITIALIZER;

static void estale_note_request (fuse_thread_t *ft, struct fuse_in_header *in, int had_fh, uint64_t lent) {
  if (estale_log < 0) estale_log = getenv("MNEMO_FUSE_TRACE") != NULL;
  if (!estale_log) return;
  pthread_mutex_lock(&estale_ring_mut);
  typeof(estale_ring[0]) *t = &estale_ring[in->unique % 512];
  t->unique = in->unique;
  t->nodeid = in->nodeid;
  t->opcode = in->opcode;
  t->had_fh = had_fh;
  t->lent = lent;
  pthread_mutex_lock(&ft->open_mut);
  // -1: the node is not noted at all.
  if (!fuse_native_tree_fhs(ft->tree, in->nodeid, t->fh)) for (int i = 0; i < 4; i++) t->fh[i] = (uint64_t) -1;
  char name[256] = "";
  uint64_t parent = 0;
  int named = 0;
  int noted = fuse_native_tree_name_of(ft->tree, in->nodeid, &parent, name, sizeof(name), &named);
  t->name_node = noted ? in->nodeid : 0;
  t->parent = parent;
  t->gone = noted && !named;
  snprintf(t->name, sizeof(t->name), "%s", name);
  pthread_mutex_unlock(&ft->open_mut);
  pthread_mutex_unlock(&estale_ring_mut);
}

static void estale_note_reply (struct fuse_out_header *out) {
  if (estale_log != 1 || out->error != -ESTALE) return;
  pthread_mutex_lock(&estale_ring_mut);
  typeof(estale_ring[0]) *t = &estale_ring[out->unique % 512];
  if (t->unique == out->unique) {
    fprintf(stderr, "mnemo fuse trace: ESTALE to opcode %u node %llu (came with a handle: %d, lent %llu; handles then %lld %lld %lld %lld; name slot node %llu parent %llu gone %d '%s')\n",
      t->opcode, (unsigned long long) t->nodeid, t->had_fh, (unsigned long long) t->lent,
      (long long) t->fh[0], (long long) t->fh[1], (long long) t->fh[2], (long long) t->fh[3], (unsigned long long) t->name_node, (unsigned long long) t->parent, t->gone, t->name);
  } else {
    fprintf(stderr, "mnemo fuse trace: ESTALE to request %llu (not traced)\n", (unsigned long long) out->unique);
  }
  pthread_mutex_unlock(&estale_ring_mut);
}

static int fuse_native_known_fh (fuse_thread_t *ft, uint64_t nodeid, uint64_t *fh) {
  uint64_t fhs[4];
  pthread_mutex_lock(&ft->open_mut);
  fuse_native_tree_fhs(ft->tree, nodeid, fhs);
  pthread_mutex_unlock(&ft->open_mut);
  // The most recently learnt handle first.
  for (int i = 3; i >= 0 && nodeid != 0; i--) {
    if (fhs[i] != 0) {
      *fh = fhs[i];
      return 1;
    }
  }
  return 0;
}

// Replaced while opening
//
// The kernel resolves a path to a node and then sends OPEN for that node. When an atomic save
// (sed -i, an editor) renames another file over the name in between, libfuse has already dropped
// the node's name (hard_remove) and answers ESTALE; the kernel walks the path once more and opens
// the new file, but a second rename landing in that second window reached the caller as ESTALE
// (about 1 open in 150,000 under sed -i in a loop on a loaded host). So the binding remembers
// each node's last name (the node mirror keeps it once the name is gone), and an OPEN for a node
// whose name is gone, or is being renamed over or unlinked by a request libfuse has not answered
// yet, becomes an open of that name: a CREATE without O_CREAT, which the create handler answers
// as an open (fuse_native_create_or_open), and whose reply is cut back to the OPEN reply the kernel
// waits for. The open is as if it came just after the rename, as POSIX allows: the file now at the
// name, or ENOENT if the name was removed.
// libfuse counted that open on the name's node, so its RELEASE is sent there; the lookup libfuse
// counted with it stays, keeping that node until unmount (a few bytes per such race). The kernel
// keeps the node it resolved, with that node's cached attributes (the replaced file's size), so the
// reply first drops them: otherwise fstat showed the old size and a read stopped there.

/** Notes a request whose reply the binding learns from (0 if the table is full); name/name2 may be NULL. */
static int fuse_native_pending (fuse_thread_t *ft, struct fuse_in_header *in, uint32_t opcode, uint64_t dir2, uint32_t flags, const char *name, const char *name2) {
  pthread_mutex_lock(&ft->open_mut);
  for (int i = 0; i < 64; i++) {
    typeof(ft->opening[0]) *p = &ft->opening[i];
    if (p->unique != 0) continue;
    p->unique = in->unique;
    p->nodeid = in->nodeid;
    p->opcode = opcode;
    p->dir2 = dir2;
    p->flags = flags;
    snprintf(p->name, sizeof(p->name), "%s", name != NULL ? name : "");
    snprintf(p->name2, sizeof(p->name2), "%s", name2 != NULL ? name2 : "");
    pthread_mutex_unlock(&ft->open_mut);
    return 1;
  }
  pthread_mutex_unlock(&ft->open_mut);
  return 0;
}

/** A NUL-terminated name at `p` within `len` bytes, or NULL. */
static const char *fuse_native_arg_name (const char *p, size_t len) {
  return (len > 0 && len <= 4096 && memchr(p, 0, len) != NULL) ? p : NULL;
}

/**
 * A rename over or an unlink of parent/name is read but not answered yet: libfuse may drop the
 * name before it resolves an OPEN read now. The caller holds open_mut.
 */
static int fuse_native_name_leaving (fuse_thread_t *ft, uint64_t parent, const char *name) {
  for (int i = 0; i < 64; i++) {
    typeof(ft->opening[0]) *p = &ft->opening[i];
    if (p->unique == 0) continue;
    if ((p->opcode == FUSE_RENAME || p->opcode == FUSE_RENAME2) && p->dir2 == parent && strcmp(p->name2, name) == 0) return 1;
    if (p->opcode == FUSE_UNLINK && p->nodeid == parent && strcmp(p->name, name) == 0) return 1;
  }
  return 0;
}

/** What a successful reply to a noted request teaches: names, and for OPEN and CREATE the handle. */
static void fuse_native_learn_reply (fuse_thread_t *ft, typeof(ft->opening[0]) *p, const char *body, size_t len) {
  switch (p->opcode) {
    case FUSE_LOOKUP:
    case FUSE_MKDIR:
      if (len >= sizeof(struct fuse_entry_out)) {
        struct fuse_entry_out *e = (struct fuse_entry_out *) body;
        pthread_mutex_lock(&ft->open_mut);
        fuse_native_tree_learn(ft->tree, e->nodeid, p->nodeid, p->name);
        fuse_native_tree_set_ino(ft->tree, e->nodeid, e->attr.ino);
        pthread_mutex_unlock(&ft->open_mut);
      }
      break;
    case FUSE_OPEN:
      if (len >= sizeof(struct fuse_open_out)) fuse_native_learn(ft, p->nodeid, ((struct fuse_open_out *) body)->fh);
      break;
    case FUSE_CREATE:
      // fuse_entry_out (its first field the new node), then fuse_open_out (its first field the handle).
      if (len >= sizeof(uint64_t) + sizeof(struct fuse_open_out)) {
        uint64_t created = *(uint64_t *) body;
        pthread_mutex_lock(&ft->open_mut);
        fuse_native_tree_learn(ft->tree, created, p->nodeid, p->name);
        if (len >= sizeof(struct fuse_entry_out)) fuse_native_tree_set_ino(ft->tree, created, ((struct fuse_entry_out *) body)->attr.ino);
        // Noted after the node: handles live in its entry.
        fuse_native_tree_hold_fh(ft->tree, created, ((struct fuse_open_out *) (body + len - sizeof(struct fuse_open_out)))->fh);
        pthread_mutex_unlock(&ft->open_mut);
      }
      break;
    case FUSE_UNLINK: {
      pthread_mutex_lock(&ft->open_mut);
      fuse_native_tree_remove(ft->tree, p->nodeid, p->name);
      pthread_mutex_unlock(&ft->open_mut);
      break;
    }
    case FUSE_RMDIR:
      pthread_mutex_lock(&ft->open_mut);
      fuse_native_tree_remove(ft->tree, p->nodeid, p->name);
      pthread_mutex_unlock(&ft->open_mut);
      break;
    case FUSE_RENAME:
    case FUSE_RENAME2: {
      pthread_mutex_lock(&ft->open_mut);
      // The node renamed over loses its name (an OPEN of it already resolved is borrowed); an exchange swaps them.
      fuse_native_tree_rename(ft->tree, p->nodeid, p->name, p->dir2, p->name2, (p->flags & (1 << 1)) != 0);
      pthread_mutex_unlock(&ft->open_mut);
      break;
    }
  }
}

/** The opcode a borrowed open is noted under (not a FUSE opcode). */
#define FUSE_NATIVE_BORROWED_OPEN 0x80000001u

// A rename of a name onto itself
//
// The VFS answers rename(x, x) itself when both names resolve to one inode, but when the kernel's
// two lookups disagree (a file whose save was refused vanished while the kernel still held its
// entry) it sends the RENAME on. libfuse's high-level rename then write-locks the node for the old
// name and waits for the same node's lock for the new name: for ever, and the caller with it (found
// by test/fs/lockstep.test.ts). The binding answers such a request itself, as the VFS would have:
// done (EEXIST with RENAME_NOREPLACE), and reads the next one for libfuse.

/** A RENAME's or RENAME2's arguments, read from the request in `buf`; 0 if it is not one. */
typedef struct { struct fuse_in_header *in; uint64_t newdir; uint32_t flags; const char *from; const char *to; } fuse_native_rename_t;

static int fuse_native_rename_args (void *buf, ssize_t n, fuse_native_rename_t *r) {
  if (n < (ssize_t) sizeof(struct fuse_in_header)) return 0;
  struct fuse_in_header *in = (struct fuse_in_header *) buf;
  if (in->opcode != FUSE_RENAME && in->opcode != FUSE_RENAME2) return 0;
  char *arg = (char *) buf + sizeof(struct fuse_in_header);
  size_t arg_len = (size_t) n - sizeof(struct fuse_in_header);
  size_t head = in->opcode == FUSE_RENAME ? sizeof(struct fuse_rename_in) : sizeof(struct fuse_rename2_in);
  if (arg_len <= head) return 0;
  const char *from = fuse_native_arg_name(arg + head, arg_len - head);
  if (from == NULL) return 0;
  size_t used = head + strlen(from) + 1;
  const char *to = fuse_native_arg_name(arg + used, arg_len - used);
  if (to == NULL) return 0;
  r->in = in;
  r->newdir = ((struct fuse_rename_in *) arg)->newdir;
  r->flags = in->opcode == FUSE_RENAME2 ? ((struct fuse_rename2_in *) arg)->flags : 0;
  r->from = from;
  r->to = to;
  return 1;
}

/** Answers the request `in` with `error` itself; libfuse never sees it. */
static void fuse_native_answer (int fd, struct fuse_in_header *in, int32_t error) {
  struct fuse_out_header out = { .len = sizeof(out), .error = error, .unique = in->unique };
  // A write that fails (the request was interrupted meanwhile) has nobody left to answer.
  if (write(fd, &out, sizeof(out)) < 0) {}
}

/** True if the request in `buf` is a rename of a name onto itself, answered here. */
static int fuse_native_self_rename (int fd, void *buf, ssize_t n) {
  fuse_native_rename_t r;
  if (!fuse_native_rename_args(buf, n, &r) || r.newdir != r.in->nodeid || strcmp(r.from, r.to) != 0) return 0;
  fuse_native_answer(fd, r.in, (r.flags & 1) ? -EEXIST : 0);
  return 1;
}

// A rename libfuse would wait on for ever
//
// By the kernel's dentries a rename may be fine while, by libfuse's names, it moves a directory's
// child onto the directory itself (or a directory into its own subtree): libfuse keeps the name of
// a directory moved elsewhere until the kernel forgets its node, though the kernel's lookup of that
// name came back ENOENT and let a child of the old directory take it (node-tree.h). libfuse's rename
// then locks the first path and waits for the second, which needs a lock the first holds, for ever,
// while the caller holds the kernel's directory locks (found by test/stress/records.ts: a session's
// `rename('d/e', 'd')` after another moved `d` away). The binding answers such a rename ESTALE
// itself: the kernel walks both paths once more from fresh lookups, and the caller gets what they
// show (ENOENT here: `d/e` went with `d`).

/** True if the request in `buf` is such a rename, answered here. */
static int fuse_native_stale_rename (int fd, void *buf, ssize_t n) {
  fuse_native_rename_t r;
  fuse_thread_t *ft = fuse_native_mount_of(fd);
  if (ft == NULL || !fuse_native_rename_args(buf, n, &r)) return 0;
  pthread_mutex_lock(&ft->open_mut);
  int stuck = fuse_native_tree_rename_locks_itself(ft->tree, r.in->nodeid, r.from, r.newdir, r.to);
  pthread_mutex_unlock(&ft->open_mut);
  if (stuck) fuse_native_answer(fd, r.in, -ESTALE);
  return stuck;
}

static ssize_t fuse_native_io_read_one (int fd, void *buf, size_t buf_len, void *userdata);

static ssize_t fuse_native_io_read (int fd, void *buf, size_t buf_len, void *userdata) {
  for (;;) {
    ssize_t n = fuse_native_io_read_one(fd, buf, buf_len, userdata);
    if (!fuse_native_self_rename(fd, buf, n) && !fuse_native_stale_rename(fd, buf, n)) return n;
  }
}

static ssize_t fuse_native_io_read_one (int fd, void *buf, size_t buf_len, void *userdata) {
  ssize_t n = read(fd, buf, buf_len);
  // What the last request noted for its open or getattr, had libfuse answered it without calling us.
  fuse_native_open_ino = 0;
  fuse_native_open_nodeid = 0;
  fuse_native_getattr_lent = 0;
  fuse_thread_t *ft = fuse_native_mount_of(fd);
  if (n < (ssize_t) sizeof(struct fuse_in_header) || ft == NULL) return n;
  struct fuse_in_header *in = (struct fuse_in_header *) buf;
  char *arg = (char *) buf + sizeof(struct fuse_in_header);
  size_t arg_len = (size_t) n - sizeof(struct fuse_in_header);
  uint64_t fh = 0;
  int had_fh = 0;
  switch (in->opcode) {
    case FUSE_LOOKUP:
    case FUSE_UNLINK:
    case FUSE_RMDIR: {
      const char *name = fuse_native_arg_name(arg, arg_len);
      if (name != NULL) fuse_native_pending(ft, in, in->opcode, 0, 0, name, NULL);
      break;
    }
    case FUSE_RENAME:
    case FUSE_RENAME2: {
      fuse_native_rename_t r;
      if (fuse_native_rename_args(buf, n, &r)) fuse_native_pending(ft, in, in->opcode, r.newdir, r.flags, r.from, r.to);
      break;
    }
    case FUSE_FORGET:
      pthread_mutex_lock(&ft->open_mut);
      if (arg_len >= sizeof(struct fuse_forget_in)) {
        fuse_native_tree_forget(ft->tree, in->nodeid, ((struct fuse_forget_in *) arg)->nlookup);
      }
      pthread_mutex_unlock(&ft->open_mut);
      break;
    case FUSE_BATCH_FORGET:
      if (arg_len >= sizeof(struct fuse_batch_forget_in)) {
        uint32_t count = ((struct fuse_batch_forget_in *) arg)->count;
        struct fuse_forget_one *one = (struct fuse_forget_one *) (arg + sizeof(struct fuse_batch_forget_in));
        size_t room = (arg_len - sizeof(struct fuse_batch_forget_in)) / sizeof(struct fuse_forget_one);
        pthread_mutex_lock(&ft->open_mut);
        for (uint32_t i = 0; i < count && i < room; i++) {
          fuse_native_tree_forget(ft->tree, one[i].nodeid, one[i].nlookup);
        }
        pthread_mutex_unlock(&ft->open_mut);
      }
      break;
    case FUSE_MKDIR:
      if (arg_len > sizeof(struct fuse_mkdir_in)) {
        const char *name = fuse_native_arg_name(arg + sizeof(struct fuse_mkdir_in), arg_len - sizeof(struct fuse_mkdir_in));
        if (name != NULL) fuse_native_pending(ft, in, in->opcode, 0, 0, name, NULL);
      }
      break;
    case FUSE_CREATE:
      if (arg_len > sizeof(struct fuse_create_in)) {
        fuse_native_pending(ft, in, in->opcode, 0, 0, fuse_native_arg_name(arg + sizeof(struct fuse_create_in), arg_len - sizeof(struct fuse_create_in)), NULL);
      }
      break;
    case FUSE_OPEN: {
      if (arg_len < sizeof(struct fuse_open_in)) break;
      uint64_t parent = 0;
      char name[256] = "";
      int slot = -1;
      pthread_mutex_lock(&ft->open_mut);
      uint64_t held_in = 0;
      int named = 0;
      if (fuse_native_tree_name_of(ft->tree, in->nodeid, &held_in, name, sizeof(name), &named) && (!named || fuse_native_name_leaving(ft, held_in, name))) {
        for (int i = 0; i < 64 && slot < 0; i++) if (ft->borrowed[i].fh == 0 && ft->borrowed[i].unique == 0) slot = i;
        if (slot >= 0) {
          parent = held_in;
          ft->borrowed[slot].unique = in->unique;
        }
      }
      if (parent == 0) name[0] = 0;
      pthread_mutex_unlock(&ft->open_mut);
      size_t need = sizeof(struct fuse_in_header) + sizeof(struct fuse_create_in) + strlen(name) + 1;
      if (parent != 0 && (need > buf_len || !fuse_native_pending(ft, in, FUSE_NATIVE_BORROWED_OPEN, parent, (uint32_t) slot, name, NULL))) {
        pthread_mutex_lock(&ft->open_mut);
        ft->borrowed[slot].unique = 0;
        pthread_mutex_unlock(&ft->open_mut);
        parent = 0;
      }
      if (parent != 0) {
        // The node the kernel resolved, as for any OPEN: its file, not the one at the name, is
        // what the open may come back to when the name is gone too (fs/reopens.ts).
        pthread_mutex_lock(&ft->open_mut);
        fuse_native_open_ino = fuse_native_tree_ino(ft->tree, in->nodeid);
        pthread_mutex_unlock(&ft->open_mut);
        // This node's name is gone or going: open the name instead (see "Replaced while opening").
        struct fuse_open_in o = *(struct fuse_open_in *) arg;
        struct fuse_create_in c = { .flags = o.flags & ~O_CREAT, .mode = S_IFREG | 0644, .umask = 0, .open_flags = o.open_flags };
        memcpy(arg, &c, sizeof(c));
        strcpy(arg + sizeof(c), name);
        in->opcode = FUSE_CREATE;
        in->nodeid = parent;
        in->len = (uint32_t) need;
        n = (ssize_t) need;
        break;
      }
      fuse_native_pending(ft, in, in->opcode, 0, 0, NULL, NULL);
      pthread_mutex_lock(&ft->open_mut);
      fuse_native_open_ino = fuse_native_tree_ino(ft->tree, in->nodeid);
      pthread_mutex_unlock(&ft->open_mut);
      fuse_native_open_nodeid = in->nodeid;
      break;
    }
    case FUSE_READ:
    case FUSE_WRITE:
    case FUSE_FLUSH:
    case FUSE_FSYNC:
      // Each of these requests' arguments starts with the file handle.
      if (arg_len >= sizeof(uint64_t)) fuse_native_learn(ft, in->nodeid, *(uint64_t *) arg);
      break;
    case FUSE_RELEASE:
      if (arg_len >= sizeof(uint64_t)) {
        uint64_t released = *(uint64_t *) arg;
        fuse_native_forget_fh(ft, in->nodeid, released);
        // A borrowed open is released on the node libfuse counted it on.
        pthread_mutex_lock(&ft->open_mut);
        for (int i = 0; i < 64 && released != 0; i++) {
          if (ft->borrowed[i].fh != released) continue;
          in->nodeid = ft->borrowed[i].nodeid;
          ft->borrowed[i].fh = 0;
          break;
        }
        pthread_mutex_unlock(&ft->open_mut);
      }
      break;
    case FUSE_GETATTR:
      if (arg_len >= sizeof(struct fuse_getattr_in)) {
        struct fuse_getattr_in *g = (struct fuse_getattr_in *) arg;
        had_fh = (g->getattr_flags & FUSE_GETATTR_FH) != 0;
        if (!(g->getattr_flags & FUSE_GETATTR_FH) && fuse_native_known_fh(ft, in->nodeid, &fh)) {
          g->getattr_flags |= FUSE_GETATTR_FH;
          g->fh = fh;
          fuse_native_getattr_lent = 1;
        }
      }
      break;
    case FUSE_SETATTR:
      if (arg_len >= sizeof(struct fuse_setattr_in)) {
        struct fuse_setattr_in *a = (struct fuse_setattr_in *) arg;
        had_fh = (a->valid & FATTR_FH) != 0;
        // A truncate by path has no open file to stand for: only attribute changes get one.
        if (!(a->valid & (FATTR_FH | FATTR_SIZE)) && fuse_native_known_fh(ft, in->nodeid, &fh)) {
          a->valid |= FATTR_FH;
          a->fh = fh;
        }
      }
      break;
  }
  estale_note_request(ft, in, had_fh, fh);
  return n;
}

static ssize_t fuse_native_io_writev (int fd, struct iovec *iov, int count, void *userdata) {
  fuse_thread_t *ft = fuse_native_mount_of(fd);
  if (ft != NULL && count > 0 && iov[0].iov_len >= sizeof(struct fuse_out_header)) {
    struct fuse_out_header *out = (struct fuse_out_header *) iov[0].iov_base;
    estale_note_reply(out);
    int found = 0;
    typeof(ft->opening[0]) p;
    pthread_mutex_lock(&ft->open_mut);
    for (int i = 0; i < 64 && out->unique != 0; i++) {
      if (ft->opening[i].unique != out->unique) continue;
      p = ft->opening[i];
      found = 1;
      ft->opening[i].unique = 0;
      break;
    }
    pthread_mutex_unlock(&ft->open_mut);
    if (found && p.opcode == FUSE_NATIVE_BORROWED_OPEN && out->error != 0) {
      // Refused (ENOENT: the name was removed): the open slot is free again.
      pthread_mutex_lock(&ft->open_mut);
      ft->borrowed[p.flags % 64].unique = 0;
      pthread_mutex_unlock(&ft->open_mut);
    }
    if (found && out->error == 0) {
      // The reply's payload, gathered.
      char body[512];
      size_t len = 0;
      for (int i = 1; i < count && len < sizeof(body); i++) {
        size_t take = iov[i].iov_len < sizeof(body) - len ? iov[i].iov_len : sizeof(body) - len;
        memcpy(body + len, iov[i].iov_base, take);
        len += take;
      }
      if (iov[0].iov_len > sizeof(struct fuse_out_header)) len = 0;
      if (p.opcode == FUSE_NATIVE_BORROWED_OPEN && len >= sizeof(uint64_t) + sizeof(struct fuse_open_out)) {
        // A CREATE reply to an OPEN the kernel sent: the kernel gets the fuse_open_out part only.
        uint64_t counted = *(uint64_t *) body;
        struct fuse_open_out o;
        memcpy(&o, body + len - sizeof(o), sizeof(o));
        fuse_native_learn(ft, p.nodeid, o.fh);
        pthread_mutex_lock(&ft->open_mut);
        ft->borrowed[p.flags % 64].fh = o.fh;
        ft->borrowed[p.flags % 64].nodeid = counted;
        ft->borrowed[p.flags % 64].unique = 0;
        // libfuse looked the name up for the open it made (the kernel is not told of that node).
        fuse_native_tree_learn(ft->tree, counted, p.dir2, p.name);
        pthread_mutex_unlock(&ft->open_mut);
        // The kernel opens the file now at the name through the node it resolved first, and still
        // holds that node's attributes: the old file's size. Dropped before the reply (attributes
        // only, no pages: nothing here waits on a lock the opener holds), so the opener's fstat asks
        // again and a read past the old size refreshes it instead of stopping there.
        fuse_lowlevel_notify_inval_inode(fuse_get_session(ft->fuse), p.nodeid, -1, 0);
        struct fuse_out_header h = *out;
        h.len = sizeof(h) + sizeof(o);
        struct iovec cut[2] = { { &h, sizeof(h) }, { &o, sizeof(o) } };
        ssize_t sent = writev(fd, cut, 2);
        if (sent < 0) {
          // The open was interrupted: libfuse releases it itself, and no RELEASE will come.
          pthread_mutex_lock(&ft->open_mut);
          ft->borrowed[p.flags % 64].fh = 0;
          pthread_mutex_unlock(&ft->open_mut);
        }
        return sent;
      }
      fuse_native_learn_reply(ft, &p, body, len);
    }
  }
  return writev(fd, iov, count);
}

// Cache invalidation

/**
 * An open's reply asked (OPEN_DROP_ATTRS) that the kernel forget its cached attributes of the node
 * it opens: the file's stored version changed since the kernel last heard its size. Done here, on
 * the open's own libfuse thread after JS replied and before libfuse sends the reply, so the
 * opener's fstat, and a read past the old size, ask again. The node is the kernel's own (the one the
 * OPEN names), not the one libfuse's table holds for the path today; and the notification bumps the
 * node's attribute version, so a stat's reply that left before it and lands after it (possibly an
 * older version's size) is dropped by the kernel. Attributes only (offset -1): no page is locked, so
 * nothing the opener holds is waited on; the pages go with the open (no keep_cache).
 */
static void fuse_native_drop_attrs (fuse_thread_locals_t *l) {
  uint64_t nodeid = l->drop_nodeid;
  l->drop_nodeid = 0;
  fuse_lowlevel_notify_inval_inode(fuse_get_session(l->fuse->fuse), nodeid, -1, 0);
}

/**
 * Drops the kernel's entry for `path`: a file that vanished without an unlink or rename the kernel
 * saw (a new file whose save was refused), so a path below it is not answered ENOTDIR from the cache
 * and a create of it is not sent as an OPEN. libfuse's high-level API only resolves a path to its own
 * node, not to the directory's node id this notification needs: the node mirror resolves it, by the
 * names the kernel was given. -ENOENT when no file is noted at that path.
 */
static int fuse_native_inval_entry (fuse_thread_t *ft, const char *path) {
  const char *slash = strrchr(path, '/');
  const char *name = slash == NULL ? path : slash + 1;
  size_t dir_len = slash == NULL ? 0 : (size_t) (slash - path);
  pthread_mutex_lock(&ft->open_mut);
  uint64_t parent = fuse_native_tree_dir_holding(ft->tree, path, dir_len, name);
  pthread_mutex_unlock(&ft->open_mut);
  // Outside open_mut: the kernel takes the directory's lock here, which a request in flight may hold.
  if (parent == 0) return -ENOENT;
  return fuse_lowlevel_notify_inval_entry(fuse_get_session(ft->fuse), parent, name, strlen(name));
}

/**
 * Drops the kernel's entry for the file whose inode number is `ino` (a memory moved, changed or
 * deleted elsewhere: the API, another session, another host), at the name the kernel learnt for it,
 * so its next stat or path walk asks again. -ENOENT when no such file is noted.
 */
static int fuse_native_inval_file (fuse_thread_t *ft, uint64_t ino) {
  uint64_t parents[4];
  char names[4][256];
  pthread_mutex_lock(&ft->open_mut);
  int n = fuse_native_tree_names_of_ino(ft->tree, ino, parents, names, 4);
  pthread_mutex_unlock(&ft->open_mut);
  int res = -ENOENT;
  // Every name a node with that number holds (one, unless the kernel still holds a node of a name the file left).
  for (int i = 0; i < n; i++) {
    int r = fuse_lowlevel_notify_inval_entry(fuse_get_session(ft->fuse), parents[i], names[i], strlen(names[i]));
    if (r == 0 || res == -ENOENT) res = r;
  }
  return res;
}

/** Drops the kernel's entry for `name` in the directory whose inode number is `dir_ino` (0: the root). */
static int fuse_native_inval_name (fuse_thread_t *ft, uint64_t dir_ino, const char *name) {
  uint64_t parent = FUSE_ROOT_ID;
  if (dir_ino != 0) {
    pthread_mutex_lock(&ft->open_mut);
    parent = fuse_native_tree_node_of_ino(ft->tree, dir_ino);
    pthread_mutex_unlock(&ft->open_mut);
  }
  if (parent == 0) return -ENOENT;
  return fuse_lowlevel_notify_inval_entry(fuse_get_session(ft->fuse), parent, name, strlen(name));
}

static int fuse_native_inval_job (fuse_thread_t *ft, fuse_native_inval_t *job) {
  switch (job->entry) {
    case 0: return fuse_invalidate_path(ft->fuse, job->path);
    case 1: return fuse_native_inval_entry(ft, job->path);
    case 2: return fuse_native_inval_file(ft, job->ino);
    default: return fuse_native_inval_name(ft, job->ino, job->path);
  }
}

static void* fuse_native_notifier (void *data) {
  struct fuse_native_notify *q = (struct fuse_native_notify *) data;
  fuse_thread_t *ft = q->ft;
  pthread_setname_np(pthread_self(), "mnemo-notify");
  for (;;) {
    pthread_mutex_lock(&q->mut);
    while (q->head == NULL && !q->stop) pthread_cond_wait(&q->cond, &q->mut);
    fuse_native_inval_t *job = q->head;
    if (job != NULL) {
      q->head = job->next;
      if (q->head == NULL) q->tail = NULL;
    }
    int stop = q->stop;
    pthread_mutex_unlock(&q->mut);
    if (job == NULL && stop) break;
    if (job == NULL) continue;
    // -ENOENT: the kernel holds nothing for this path; nothing to drop.
    job->res = stop ? -ENOTCONN : fuse_native_inval_job(ft, job);
    if (napi_call_threadsafe_function(ft->invalidated, job, napi_tsfn_blocking) != napi_ok) free(job);
  }
  // Jobs queued after the stop are answered without touching the kernel.
  pthread_mutex_lock(&q->mut);
  fuse_native_inval_t *rest = q->head;
  q->head = q->tail = NULL;
  pthread_mutex_unlock(&q->mut);
  while (rest != NULL) {
    fuse_native_inval_t *next = rest->next;
    rest->res = -ENOTCONN;
    if (napi_call_threadsafe_function(ft->invalidated, rest, napi_tsfn_blocking) != napi_ok) free(rest);
    rest = next;
  }
  napi_release_threadsafe_function(ft->invalidated, napi_tsfn_release);
  return NULL;
}

/** Runs on the JS thread: calls the mount's `invalidated(id, result)` and frees the job. */
static void fuse_native_call_invalidated (napi_env env, napi_value js_cb, void *context, void *data) {
  fuse_native_inval_t *job = (fuse_native_inval_t *) data;
  if (env != NULL && js_cb != NULL) {
    napi_value argv[2];
    napi_value global;
    napi_create_uint32(env, job->id, &argv[0]);
    napi_create_int32(env, job->res, &argv[1]);
    napi_get_global(env, &global);
    napi_call_function(env, global, js_cb, 2, argv, NULL);
  }
  free(job);
}

/**
 * invalidate(thread, path, id, entry, ino): queues a kernel cache drop (fuse_native_inval_t's
 * `entry` says which: a path's attributes and pages, or an entry); `invalidated(id, res)` follows.
 */
NAPI_METHOD(fuse_native_invalidate) {
  NAPI_ARGV(5)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0);
  NAPI_ARGV_UTF8(path, 4096, 1);
  NAPI_ARGV_UINT32(id, 2);
  NAPI_ARGV_UINT32(entry, 3);
  // An inode number is a 53-bit integer (fs/stat.ts inoOf): a double holds it exactly.
  int64_t ino = 0;
  napi_get_value_int64(env, argv[4], &ino);
  size_t n = strlen(path);
  fuse_native_inval_t *job = malloc(sizeof(fuse_native_inval_t) + n + 1);
  if (job == NULL) {
    napi_throw_error(env, "ENOMEM", "out of memory");
    return NULL;
  }
  job->next = NULL;
  job->id = id;
  job->entry = entry;
  job->ino = (uint64_t) ino;
  job->res = 0;
  memcpy(job->path, path, n + 1);
  struct fuse_native_notify *q = &ft->notify[entry ? 1 : 0];
  pthread_mutex_lock(&q->mut);
  if (q->tail != NULL) q->tail->next = job;
  else q->head = job;
  q->tail = job;
  pthread_cond_signal(&q->cond);
  pthread_mutex_unlock(&q->mut);
  return NULL;
}

NAPI_METHOD(fuse_native_mount) {
  NAPI_ARGV(9)
  NAPI_ARGV_UINT32(config, 8)

  NAPI_ARGV_UTF8(mnt, 1024, 0);
  NAPI_ARGV_UTF8(mntopts, 1024, 1);
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 2);
  napi_create_reference(env, argv[3], 1, &(ft->ctx));
  napi_create_reference(env, argv[4], 1, &(ft->malloc));
  napi_value handlers = argv[5];
  NAPI_ARGV_BUFFER_CAST(uint32_t *, implemented, 6)

  for (int i = 0; i < 35; i++) {
    ft->handlers[i] = NULL;
  }

  NAPI_FOR_EACH(handlers, handler) {
    napi_create_reference(env, handler, 1, &ft->handlers[i]);
  }

  ft->env = env;
  ft->config = config;
  memset(ft->trace_count, 0, sizeof(ft->trace_count));
  memset(ft->trace_ns, 0, sizeof(ft->trace_ns));
  memset(ft->trace_in_ns, 0, sizeof(ft->trace_in_ns));
  memset(ft->trace_out_ns, 0, sizeof(ft->trace_out_ns));

  struct fuse_operations ops = { };
  if (implemented[op_access]) ops.access = fuse_native_access;
  if (implemented[op_truncate] || implemented[op_ftruncate]) ops.truncate = fuse_native_truncate3;
  if (implemented[op_getattr]) ops.getattr = fuse_native_getattr_after_create;
  if (implemented[op_flush]) ops.flush = fuse_native_flush;
  if (implemented[op_fsync]) ops.fsync = fuse_native_fsync;
  if (implemented[op_fsyncdir]) ops.fsyncdir = fuse_native_fsyncdir;
  if (implemented[op_readdir]) ops.readdir = fuse_native_readdir;
  if (implemented[op_readlink]) ops.readlink = fuse_native_readlink;
  if (implemented[op_chown]) ops.chown = fuse_native_chown;
  if (implemented[op_chmod]) ops.chmod = fuse_native_chmod;
  if (implemented[op_mknod]) ops.mknod = fuse_native_mknod;
  if (implemented[op_setxattr]) ops.setxattr = fuse_native_setxattr;
  if (implemented[op_getxattr]) ops.getxattr = fuse_native_getxattr;
  if (implemented[op_listxattr]) ops.listxattr = fuse_native_listxattr;
  if (implemented[op_removexattr]) ops.removexattr = fuse_native_removexattr;
  if (implemented[op_statfs]) ops.statfs = fuse_native_statfs;
  if (implemented[op_open]) ops.open = fuse_native_open;
  if (implemented[op_readdir]) ops.opendir = fuse_native_opendir_keep;
  if (implemented[op_read]) ops.read = fuse_native_read;
  if (implemented[op_write]) ops.write = fuse_native_write;
  if (implemented[op_release]) ops.release = fuse_native_release;
  if (implemented[op_readdir]) ops.releasedir = fuse_native_releasedir_keep;
  if (implemented[op_create]) ops.create = fuse_native_create_or_open;
  if (implemented[op_utimens]) ops.utimens = fuse_native_utimens;
  if (implemented[op_unlink]) ops.unlink = fuse_native_unlink;
  if (implemented[op_rename]) ops.rename = fuse_native_rename;
  if (implemented[op_link]) ops.link = fuse_native_link;
  if (implemented[op_symlink]) ops.symlink = fuse_native_symlink;
  if (implemented[op_mkdir]) ops.mkdir = fuse_native_mkdir;
  if (implemented[op_rmdir]) ops.rmdir = fuse_native_rmdir;
  if (implemented[op_init]) ops.init = fuse_native_init;

  int _argc = (strcmp(mntopts, "-o") <= 0) ? 1 : 2;
  char *_argv[] = {
    (char *) "fuse_bindings_dummy",
    (char *) mntopts
  };

  struct fuse_args args = FUSE_ARGS_INIT(_argc, _argv);
  struct fuse *fuse = fuse_new(&args, &ops, sizeof(struct fuse_operations), ft);
  fuse_opt_free_args(&args);
  if (fuse == NULL) {
    napi_throw_error(env, "fuse failed", "fuse failed: bad mount options");
    return NULL;
  }
  if (fuse_mount(fuse, mnt) != 0) {
    fuse_destroy(fuse);
    napi_throw_error(env, "fuse failed", "fuse failed: could not mount");
    return NULL;
  }

  // Requests and replies pass through fuse_native_io_read/writev (see "Open files").
  struct fuse_session *se = fuse_get_session(fuse);
  ft->dev_fd = fuse_session_fd(se);
  pthread_mutex_init(&ft->open_mut, NULL);
  memset(ft->opening, 0, sizeof(ft->opening));
  memset(ft->borrowed, 0, sizeof(ft->borrowed));
  ft->tree = fuse_native_tree_new();
  pthread_mutex_init(&ft->stats_mut, NULL);
  ft->stats = fuse_native_stat_cache_new();
  ft->stats_vouched = 0;
  ft->stats_answered = 0;
  if (ft->dev_fd >= 0 && ft->dev_fd < 256) {
    static const struct fuse_custom_io io = { .read = fuse_native_io_read, .writev = fuse_native_io_writev };
    fuse_native_by_fd[ft->dev_fd] = ft;
    fuse_session_custom_io(se, &io, ft->dev_fd);
  }

  uv_mutex_init(&(ft->mut));
  uv_sem_init(&(ft->sem), 0);

  strncpy(ft->mnt, mnt, 1024);
  strncpy(ft->mntopts, mntopts, 1024);
  ft->fuse = fuse;
  ft->mounted++;

  int err = uv_async_init(uv_default_loop(), &(ft->async), (uv_async_cb) fuse_native_async_init);
  if (err < 0) {
    fuse_unmount(fuse);
    fuse_destroy(fuse);
    napi_throw_error(env, "fuse failed", "fuse failed");
    return NULL;
  }

  napi_value resource_name;
  napi_create_string_utf8(env, "fuse-native-invalidate", NAPI_AUTO_LENGTH, &resource_name);
  // Two notifier threads call it, and each releases it once when it stops.
  napi_create_threadsafe_function(env, argv[7], NULL, resource_name, 0, 2, NULL, NULL, NULL, fuse_native_call_invalidated, &(ft->invalidated));
  // Pending invalidations must not keep the process alive on their own.
  napi_unref_threadsafe_function(env, ft->invalidated);
  // Every thread made here, and every libfuse worker the FUSE thread makes (a thread inherits its
  // maker's mask), blocks every signal, so the process's handlers run on Node's threads only. A
  // handler run on a libfuse worker deadlocked the process for good: libfuse cancels its workers at
  // unmount, and libuv's SIGCHLD handler (a fusermount child exiting), interrupted there by the
  // cancellation, never gave back libuv's signal lock, so the main thread and every later signal
  // (SIGTERM included) waited on it for ever.
  sigset_t all_signals, node_signals;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_BLOCK, &all_signals, &node_signals);
  for (int i = 0; i < 2; i++) {
    struct fuse_native_notify *q = &ft->notify[i];
    q->ft = ft;
    pthread_mutex_init(&q->mut, NULL);
    pthread_cond_init(&q->cond, NULL);
    q->head = q->tail = NULL;
    q->stop = 0;
    q->started = pthread_create(&(q->thread), NULL, fuse_native_notifier, q) == 0;
    // A thread that never started never releases the function: release its share here.
    if (!q->started) napi_release_threadsafe_function(ft->invalidated, napi_tsfn_release);
  }

  pthread_attr_init(&(ft->attr));
  pthread_create(&(ft->thread), &(ft->attr), start_fuse_thread, ft);
  pthread_sigmask(SIG_SETMASK, &node_signals, NULL);

  return NULL;
}

NAPI_METHOD(fuse_native_unmount) {
  NAPI_ARGV(2)
  NAPI_ARGV_UTF8(mnt, 1024, 0);
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 1);

  if (ft != NULL && ft->mounted) {
    // TODO: Investigate why the FUSE thread is not always killed after fusermount.
    // pthread_join(ft->thread, NULL);
  }

  // TODO: fix the async holding the loop
  uv_unref((uv_handle_t *) &(ft->async));
  ft->mounted--;

  return NULL;
}

NAPI_INIT() {
  const napi_node_version* version;
  assert(napi_get_node_version(env, &version) == napi_ok);

  if (version->major > 12 || (version->major == 12 && version->minor >= 16)) {
    IS_ARRAY_BUFFER_DETACH_SUPPORTED = 1;
  }

  pthread_key_create(&(thread_locals_key), NULL); // TODO: add destructor

  NAPI_EXPORT_SIZEOF(fuse_thread_t)

  NAPI_EXPORT_FUNCTION(fuse_native_mount)
  NAPI_EXPORT_FUNCTION(fuse_native_invalidate)
  NAPI_EXPORT_FUNCTION(fuse_native_trace)
  NAPI_EXPORT_FUNCTION(fuse_native_stat_keep)
  NAPI_EXPORT_FUNCTION(fuse_native_stat_forget)
  NAPI_EXPORT_FUNCTION(fuse_native_stat_hold)
  NAPI_EXPORT_FUNCTION(fuse_native_stat_vouch)
  NAPI_EXPORT_FUNCTION(fuse_native_stat_info)
  NAPI_EXPORT_OFFSETOF(fuse_thread_t, stat_cells)
  NAPI_EXPORT_FUNCTION(fuse_native_unmount)

  NAPI_EXPORT_FUNCTION(fuse_native_signal_getattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_init)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_access)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_statfs)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_getattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_flush)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_fsync)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_fsyncdir)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_readdir)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_truncate)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_ftruncate)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_utimens)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_readlink)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_chown)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_chmod)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_mknod)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_setxattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_getxattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_listxattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_removexattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_open)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_opendir)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_read)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_write)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_release)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_releasedir)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_create)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_unlink)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_rename)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_link)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_symlink)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_mkdir)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_rmdir)

  NAPI_EXPORT_UINT32(op_getattr)
  NAPI_EXPORT_UINT32(op_init)
  NAPI_EXPORT_UINT32(op_error)
  NAPI_EXPORT_UINT32(op_access)
  NAPI_EXPORT_UINT32(op_statfs)
  NAPI_EXPORT_UINT32(op_fgetattr)
  NAPI_EXPORT_UINT32(op_getattr)
  NAPI_EXPORT_UINT32(op_flush)
  NAPI_EXPORT_UINT32(op_fsync)
  NAPI_EXPORT_UINT32(op_fsyncdir)
  NAPI_EXPORT_UINT32(op_readdir)
  NAPI_EXPORT_UINT32(op_truncate)
  NAPI_EXPORT_UINT32(op_ftruncate)
  NAPI_EXPORT_UINT32(op_utimens)
  NAPI_EXPORT_UINT32(op_readlink)
  NAPI_EXPORT_UINT32(op_chown)
  NAPI_EXPORT_UINT32(op_chmod)
  NAPI_EXPORT_UINT32(op_mknod)
  NAPI_EXPORT_UINT32(op_setxattr)
  NAPI_EXPORT_UINT32(op_getxattr)
  NAPI_EXPORT_UINT32(op_listxattr)
  NAPI_EXPORT_UINT32(op_removexattr)
  NAPI_EXPORT_UINT32(op_open)
  NAPI_EXPORT_UINT32(op_opendir)
  NAPI_EXPORT_UINT32(op_read)
  NAPI_EXPORT_UINT32(op_write)
  NAPI_EXPORT_UINT32(op_release)
  NAPI_EXPORT_UINT32(op_releasedir)
  NAPI_EXPORT_UINT32(op_create)
  NAPI_EXPORT_UINT32(op_unlink)
  NAPI_EXPORT_UINT32(op_rename)
  NAPI_EXPORT_UINT32(op_link)
  NAPI_EXPORT_UINT32(op_symlink)
  NAPI_EXPORT_UINT32(op_mkdir)
  NAPI_EXPORT_UINT32(op_rmdir)
}
