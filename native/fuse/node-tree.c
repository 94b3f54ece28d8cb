// A mirror of libfuse's high-level name table (see node-tree.h for why).
//
// Each node the kernel was told of is kept by node id, with the directory node and the name it holds
// (found by a 64-bit hash of the name: two names of one directory that collide would only make a
// rename be answered ESTALE once, which the kernel retries; the name itself is kept too, for the
// entry drops), the inode number its last entry reply gave the kernel and the handles the kernel
// holds open on it. Three chained hash indexes: by node id, by (directory, name) and by inode
// number. Unbounded, as libfuse's own table is: an entry lives until the kernel forgets its node
// (which it does not while a file of it is open).

#include "node-tree.h"

#include <stdlib.h>
#include <string.h>

#define ROOT_ID 1
#define BUCKETS 4096
// Deeper than any path mnemo accepts; a cycle (only a mirror gone wrong could make one) stops here.
#define MAX_DEPTH 4096

typedef struct entry {
  uint64_t nodeid;
  uint64_t nlookup;
  int named;
  uint64_t parent;
  uint64_t name;
  /** The name held (or last held), as text. */
  char *text;
  /** 0 until an entry reply names it. */
  uint64_t ino;
  /** Handles the kernel holds open on the node (0: a free slot); `next_fh` counts those noted. */
  uint64_t fh[4];
  uint32_t next_fh;
  struct entry *next_id;
  struct entry *next_name;
  struct entry *next_ino;
} entry_t;

struct fuse_native_tree {
  entry_t *by_id[BUCKETS];
  entry_t *by_name[BUCKETS];
  entry_t *by_ino[BUCKETS];
};

static uint64_t name_hash (const char *name) {
  uint64_t h = 14695981039346656037ULL;
  for (const unsigned char *p = (const unsigned char *) name; *p; p++) h = (h ^ *p) * 1099511628211ULL;
  return h;
}

static size_t id_bucket (uint64_t nodeid) {
  return (size_t) (nodeid % BUCKETS);
}

static size_t name_bucket (uint64_t parent, uint64_t name) {
  return (size_t) ((name ^ (parent * 0x9E3779B97F4A7C15ULL)) % BUCKETS);
}

static size_t ino_bucket (uint64_t ino) {
  return (size_t) ((ino * 0x9E3779B97F4A7C15ULL) >> 52) % BUCKETS;
}

fuse_native_tree_t *fuse_native_tree_new (void) {
  return calloc(1, sizeof(fuse_native_tree_t));
}

void fuse_native_tree_free (fuse_native_tree_t *t) {
  if (t == NULL) return;
  for (size_t i = 0; i < BUCKETS; i++) {
    entry_t *e = t->by_id[i];
    while (e != NULL) {
      entry_t *next = e->next_id;
      free(e->text);
      free(e);
      e = next;
    }
  }
  free(t);
}

static entry_t *by_id (fuse_native_tree_t *t, uint64_t nodeid) {
  for (entry_t *e = t->by_id[id_bucket(nodeid)]; e != NULL; e = e->next_id) if (e->nodeid == nodeid) return e;
  return NULL;
}

static entry_t *by_name (fuse_native_tree_t *t, uint64_t parent, uint64_t name) {
  for (entry_t *e = t->by_name[name_bucket(parent, name)]; e != NULL; e = e->next_name) {
    if (e->parent == parent && e->name == name) return e;
  }
  return NULL;
}

static void unname (fuse_native_tree_t *t, entry_t *e) {
  if (!e->named) return;
  entry_t **p = &t->by_name[name_bucket(e->parent, e->name)];
  while (*p != NULL && *p != e) p = &(*p)->next_name;
  if (*p == e) *p = e->next_name;
  e->named = 0;
  e->next_name = NULL;
}

/** `e` holds `text` in `parent`; whichever node held it before does not any more (one node per name). */
static void give_name (fuse_native_tree_t *t, entry_t *e, uint64_t parent, const char *text) {
  uint64_t name = name_hash(text);
  entry_t *holder = by_name(t, parent, name);
  if (holder != NULL && holder != e) unname(t, holder);
  if (holder != e) {
    unname(t, e);
    e->parent = parent;
    e->name = name;
    e->named = 1;
    size_t b = name_bucket(parent, name);
    e->next_name = t->by_name[b];
    t->by_name[b] = e;
  }
  if (e->text == NULL || strcmp(e->text, text) != 0) {
    char *copy = strdup(text);
    if (copy != NULL) {
      free(e->text);
      e->text = copy;
    }
  }
}

static void unlink_ino (fuse_native_tree_t *t, entry_t *e) {
  if (e->ino == 0) return;
  entry_t **p = &t->by_ino[ino_bucket(e->ino)];
  while (*p != NULL && *p != e) p = &(*p)->next_ino;
  if (*p == e) *p = e->next_ino;
  e->next_ino = NULL;
  e->ino = 0;
}

void fuse_native_tree_learn (fuse_native_tree_t *t, uint64_t nodeid, uint64_t parent, const char *name) {
  if (t == NULL || nodeid == 0 || nodeid == ROOT_ID || name == NULL) return;
  entry_t *e = by_id(t, nodeid);
  if (e == NULL) {
    e = calloc(1, sizeof(entry_t));
    if (e == NULL) return;
    e->nodeid = nodeid;
    size_t b = id_bucket(nodeid);
    e->next_id = t->by_id[b];
    t->by_id[b] = e;
  }
  e->nlookup++;
  give_name(t, e, parent, name);
}

void fuse_native_tree_set_ino (fuse_native_tree_t *t, uint64_t nodeid, uint64_t ino) {
  if (t == NULL) return;
  entry_t *e = by_id(t, nodeid);
  if (e == NULL || e->ino == ino) return;
  unlink_ino(t, e);
  if (ino == 0) return;
  e->ino = ino;
  size_t b = ino_bucket(ino);
  e->next_ino = t->by_ino[b];
  t->by_ino[b] = e;
}

uint64_t fuse_native_tree_ino (fuse_native_tree_t *t, uint64_t nodeid) {
  entry_t *e = t == NULL ? NULL : by_id(t, nodeid);
  return e == NULL ? 0 : e->ino;
}

uint64_t fuse_native_tree_node_of_ino (fuse_native_tree_t *t, uint64_t ino) {
  if (t == NULL || ino == 0) return 0;
  uint64_t any = 0;
  for (entry_t *e = t->by_ino[ino_bucket(ino)]; e != NULL; e = e->next_ino) {
    if (e->ino != ino) continue;
    if (e->named) return e->nodeid;
    if (any == 0) any = e->nodeid;
  }
  return any;
}

int fuse_native_tree_names_of_ino (fuse_native_tree_t *t, uint64_t ino, uint64_t *parents, char (*names)[256], int max) {
  if (t == NULL || ino == 0) return 0;
  int n = 0;
  for (entry_t *e = t->by_ino[ino_bucket(ino)]; e != NULL && n < max; e = e->next_ino) {
    if (e->ino != ino || !e->named || e->text == NULL || strlen(e->text) >= 256) continue;
    parents[n] = e->parent;
    strcpy(names[n], e->text);
    n++;
  }
  return n;
}

int fuse_native_tree_name_of (fuse_native_tree_t *t, uint64_t nodeid, uint64_t *parent, char *name, size_t size, int *named) {
  entry_t *e = t == NULL ? NULL : by_id(t, nodeid);
  if (e == NULL || e->text == NULL || strlen(e->text) >= size) return 0;
  *parent = e->parent;
  strcpy(name, e->text);
  *named = e->named;
  return 1;
}

/** The node holding the one name `name[0..len)` in `parent` now, or 0. */
static uint64_t child (fuse_native_tree_t *t, uint64_t parent, const char *name, size_t len) {
  char part[256];
  if (len == 0 || len >= sizeof(part)) return 0;
  memcpy(part, name, len);
  part[len] = 0;
  entry_t *e = by_name(t, parent, name_hash(part));
  return e != NULL && e->text != NULL && strcmp(e->text, part) == 0 ? e->nodeid : 0;
}

uint64_t fuse_native_tree_dir_holding (fuse_native_tree_t *t, const char *dir, size_t dir_len, const char *name) {
  if (t == NULL) return 0;
  uint64_t node = ROOT_ID;
  for (size_t i = 0; i < dir_len && node != 0; ) {
    while (i < dir_len && dir[i] == '/') i++;
    size_t start = i;
    while (i < dir_len && dir[i] != '/') i++;
    if (i > start) node = child(t, node, dir + start, i - start);
  }
  return node != 0 && child(t, node, name, strlen(name)) != 0 ? node : 0;
}

void fuse_native_tree_hold_fh (fuse_native_tree_t *t, uint64_t nodeid, uint64_t fh) {
  entry_t *e = t == NULL ? NULL : by_id(t, nodeid);
  if (e == NULL || fh == 0) return;
  for (int i = 0; i < 4; i++) if (e->fh[i] == fh) return;
  e->fh[e->next_fh++ % 4] = fh;
}

void fuse_native_tree_drop_fh (fuse_native_tree_t *t, uint64_t nodeid, uint64_t fh) {
  entry_t *e = t == NULL ? NULL : by_id(t, nodeid);
  if (e == NULL) return;
  for (int i = 0; i < 4; i++) if (e->fh[i] == fh) e->fh[i] = 0;
}

int fuse_native_tree_fhs (fuse_native_tree_t *t, uint64_t nodeid, uint64_t fhs[4]) {
  entry_t *e = t == NULL ? NULL : by_id(t, nodeid);
  for (int i = 0; i < 4; i++) fhs[i] = e == NULL ? 0 : e->fh[(e->next_fh + i) % 4];
  return e != NULL;
}

void fuse_native_tree_forget (fuse_native_tree_t *t, uint64_t nodeid, uint64_t nlookup) {
  if (t == NULL) return;
  entry_t *e = by_id(t, nodeid);
  if (e == NULL) return;
  if (nlookup < e->nlookup) {
    e->nlookup -= nlookup;
    return;
  }
  unname(t, e);
  unlink_ino(t, e);
  entry_t **p = &t->by_id[id_bucket(nodeid)];
  while (*p != e) p = &(*p)->next_id;
  *p = e->next_id;
  free(e->text);
  free(e);
}

void fuse_native_tree_remove (fuse_native_tree_t *t, uint64_t parent, const char *name) {
  if (t == NULL) return;
  entry_t *e = by_name(t, parent, name_hash(name));
  if (e != NULL) unname(t, e);
}

void fuse_native_tree_rename (fuse_native_tree_t *t, uint64_t olddir, const char *oldname, uint64_t newdir, const char *newname, int exchange) {
  if (t == NULL) return;
  entry_t *from = by_name(t, olddir, name_hash(oldname));
  entry_t *to = by_name(t, newdir, name_hash(newname));
  // As libfuse's rename_node: nothing moves when it holds no node at the old name.
  if (from == NULL) return;
  if (exchange) {
    unname(t, from);
    if (to != NULL) {
      unname(t, to);
      give_name(t, to, olddir, oldname);
    }
    give_name(t, from, newdir, newname);
    return;
  }
  give_name(t, from, newdir, newname);
}

/** True if `ancestor` is `nodeid` or one of its directories, by the names held now. */
static int under (fuse_native_tree_t *t, uint64_t nodeid, uint64_t ancestor) {
  for (int depth = 0; depth < MAX_DEPTH && nodeid != 0; depth++) {
    if (nodeid == ancestor) return 1;
    if (nodeid == ROOT_ID) return 0;
    entry_t *e = by_id(t, nodeid);
    // A node without a name fails libfuse's path walk with ESTALE: no wait.
    if (e == NULL || !e->named) return 0;
    nodeid = e->parent;
  }
  return 0;
}

int fuse_native_tree_rename_locks_itself (fuse_native_tree_t *t, uint64_t olddir, const char *oldname, uint64_t newdir, const char *newname) {
  if (t == NULL) return 0;
  entry_t *target = by_name(t, newdir, name_hash(newname));
  if (target != NULL && under(t, olddir, target->nodeid)) return 1;
  entry_t *moved = by_name(t, olddir, name_hash(oldname));
  return moved != NULL && under(t, newdir, moved->nodeid);
}
