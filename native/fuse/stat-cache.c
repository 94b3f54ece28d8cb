// Stats answered on libfuse's threads (see stat-cache.h for why and when).
//
// A chained hash table by path, grown as it fills. Bounded as the view is (MAX_STATS, as
// fs/storage-view.ts MAX_ENTRIES): past that many stats, every stat is dropped and held paths stay.

#include "stat-cache.h"

#include <stdlib.h>
#include <string.h>

#define MAX_STATS 20000
#define FIRST_BUCKETS 1024

typedef struct entry {
  uint64_t hash;
  char *path;
  int has_stat;
  int held;
  uint32_t gen;
  struct stat st;
  struct entry *next;
} entry_t;

struct fuse_native_stat_cache {
  entry_t **buckets;
  size_t nbuckets;
  size_t entries;
  uint32_t stats;
};

static uint64_t path_hash (const char *path) {
  uint64_t h = 14695981039346656037ULL;
  for (const unsigned char *p = (const unsigned char *) path; *p; p++) h = (h ^ *p) * 1099511628211ULL;
  return h;
}

fuse_native_stat_cache_t *fuse_native_stat_cache_new (void) {
  fuse_native_stat_cache_t *c = calloc(1, sizeof(fuse_native_stat_cache_t));
  if (c == NULL) return NULL;
  c->buckets = calloc(FIRST_BUCKETS, sizeof(entry_t *));
  if (c->buckets == NULL) {
    free(c);
    return NULL;
  }
  c->nbuckets = FIRST_BUCKETS;
  return c;
}

void fuse_native_stat_cache_free (fuse_native_stat_cache_t *c) {
  if (c == NULL) return;
  for (size_t i = 0; i < c->nbuckets; i++) {
    entry_t *e = c->buckets[i];
    while (e != NULL) {
      entry_t *next = e->next;
      free(e->path);
      free(e);
      e = next;
    }
  }
  free(c->buckets);
  free(c);
}

static entry_t **slot_of (fuse_native_stat_cache_t *c, const char *path, uint64_t h) {
  entry_t **p = &c->buckets[h & (c->nbuckets - 1)];
  while (*p != NULL && ((*p)->hash != h || strcmp((*p)->path, path) != 0)) p = &(*p)->next;
  return p;
}

/** Removes the entry at `p` once it has neither a stat nor a hold. */
static void settle (fuse_native_stat_cache_t *c, entry_t **p) {
  entry_t *e = *p;
  if (e->has_stat || e->held) return;
  *p = e->next;
  free(e->path);
  free(e);
  c->entries--;
}

static void grow (fuse_native_stat_cache_t *c) {
  size_t n = c->nbuckets * 2;
  entry_t **b = calloc(n, sizeof(entry_t *));
  if (b == NULL) return;
  for (size_t i = 0; i < c->nbuckets; i++) {
    entry_t *e = c->buckets[i];
    while (e != NULL) {
      entry_t *next = e->next;
      entry_t **head = &b[e->hash & (n - 1)];
      e->next = *head;
      *head = e;
      e = next;
    }
  }
  free(c->buckets);
  c->buckets = b;
  c->nbuckets = n;
}

/** Drops every stat; held paths stay. */
static void drop_stats (fuse_native_stat_cache_t *c) {
  for (size_t i = 0; i < c->nbuckets; i++) {
    entry_t **p = &c->buckets[i];
    while (*p != NULL) {
      entry_t *e = *p;
      e->has_stat = 0;
      settle(c, p);
      if (*p == e) p = &e->next;
    }
  }
  c->stats = 0;
}

/** The entry for `path`, made if missing (NULL: out of memory). */
static entry_t *entry_for (fuse_native_stat_cache_t *c, const char *path) {
  uint64_t h = path_hash(path);
  entry_t **p = slot_of(c, path, h);
  if (*p != NULL) return *p;
  entry_t *e = calloc(1, sizeof(entry_t));
  if (e == NULL) return NULL;
  e->path = strdup(path);
  if (e->path == NULL) {
    free(e);
    return NULL;
  }
  e->hash = h;
  *p = e;
  c->entries++;
  if (c->entries > c->nbuckets) grow(c);
  return e;
}

void fuse_native_stat_cache_keep (fuse_native_stat_cache_t *c, const char *path, const struct stat *st, uint32_t gen) {
  if (c->stats >= MAX_STATS) drop_stats(c);
  entry_t *e = entry_for(c, path);
  if (e == NULL) return;
  if (!e->has_stat) c->stats++;
  e->has_stat = 1;
  e->gen = gen;
  e->st = *st;
}

void fuse_native_stat_cache_forget (fuse_native_stat_cache_t *c, const char *path) {
  entry_t **p = slot_of(c, path, path_hash(path));
  if (*p == NULL || !(*p)->has_stat) return;
  (*p)->has_stat = 0;
  c->stats--;
  settle(c, p);
}

void fuse_native_stat_cache_hold (fuse_native_stat_cache_t *c, const char *path, int held) {
  if (!held) {
    entry_t **p = slot_of(c, path, path_hash(path));
    if (*p == NULL) return;
    (*p)->held = 0;
    settle(c, p);
    return;
  }
  entry_t *e = entry_for(c, path);
  // Out of memory: the path cannot be marked held, so no stat of it may be answered here.
  if (e == NULL) fuse_native_stat_cache_forget(c, path);
  else e->held = 1;
}

int fuse_native_stat_cache_answer (fuse_native_stat_cache_t *c, const char *path, uint32_t gen, struct stat *out) {
  entry_t *e = *slot_of(c, path, path_hash(path));
  if (e == NULL || !e->has_stat || e->held || e->gen != gen) return 0;
  *out = e->st;
  return 1;
}

uint32_t fuse_native_stat_cache_size (fuse_native_stat_cache_t *c) {
  return c->stats;
}
