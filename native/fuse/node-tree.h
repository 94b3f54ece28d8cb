// A mirror of libfuse's high-level name table: which node holds which name in which directory node.
//
// libfuse keeps one node per name and resolves every path by walking its nodes' parent links, taking
// a lock on each; the kernel resolves paths by its own dentries. The two disagree when a name went
// away unseen: a directory moved or deleted elsewhere (another session, the API) is answered ENOENT
// when the kernel looks its name up again, but libfuse keeps the name on its node until the kernel
// forgets that node. The kernel may then send a rename that is fine by its dentries but, by
// libfuse's names, moves a directory's child onto the directory itself (or a directory into its own
// subtree): libfuse's rename locks the first path and then waits for ever for the second, which
// needs a lock the first holds, while the caller holds the kernel's directory locks. The binding
// mirrors the names from the requests and replies that pass, and answers such a rename itself.
// The same mirror keeps the name a node last held once it is gone (an OPEN of that node is turned
// into an open of the name: fuse-native.c "Replaced while opening") and finds a path's directory
// node for the kernel's entry notifications.
//
// Every function expects the caller to hold the mount's lock over the tree.

#ifndef FUSE_NATIVE_NODE_TREE_H
#define FUSE_NATIVE_NODE_TREE_H

#include <stddef.h>
#include <stdint.h>

typedef struct fuse_native_tree fuse_native_tree_t;

fuse_native_tree_t *fuse_native_tree_new (void);
void fuse_native_tree_free (fuse_native_tree_t *t);

/** A LOOKUP, CREATE or MKDIR reply: `nodeid` holds `name` in `parent` now, with one more lookup. */
void fuse_native_tree_learn (fuse_native_tree_t *t, uint64_t nodeid, uint64_t parent, const char *name);

/** The inode number the kernel was last given for `nodeid` (an entry reply's `attr.ino`), once the node is learnt. */
void fuse_native_tree_set_ino (fuse_native_tree_t *t, uint64_t nodeid, uint64_t ino);

/** The inode number noted for `nodeid`, or 0. */
uint64_t fuse_native_tree_ino (fuse_native_tree_t *t, uint64_t nodeid);

/** A node noted with inode number `ino` (one holding a name first), or 0. */
uint64_t fuse_native_tree_node_of_ino (fuse_native_tree_t *t, uint64_t ino);

/** The directory nodes and names of up to `max` nodes noted with inode number `ino` that hold a name; returns how many. */
int fuse_native_tree_names_of_ino (fuse_native_tree_t *t, uint64_t ino, uint64_t *parents, char (*names)[256], int max);

/**
 * The directory node and the name `nodeid` holds, or last held: `*named` is 0 once that name was
 * unlinked, renamed over or learnt for another node. Returns 0 (and sets nothing) when the node is
 * not noted or its name does not fit `size` bytes.
 */
int fuse_native_tree_name_of (fuse_native_tree_t *t, uint64_t nodeid, uint64_t *parent, char *name, size_t size, int *named);

/**
 * The node of the directory whose path is the first `dir_len` bytes of `dir` (the root: none, or
 * "/"), if a node holds `name` in it now, by the names held now; otherwise 0.
 */
uint64_t fuse_native_tree_dir_holding (fuse_native_tree_t *t, const char *dir, size_t dir_len, const char *name);

/**
 * The kernel holds handle `fh` open on `nodeid` (a noted node): its last four handles are kept, any
 * one of which names the file to a request that came without one.
 */
void fuse_native_tree_hold_fh (fuse_native_tree_t *t, uint64_t nodeid, uint64_t fh);

/** The kernel released handle `fh` of `nodeid`. */
void fuse_native_tree_drop_fh (fuse_native_tree_t *t, uint64_t nodeid, uint64_t fh);

/** The four handle slots of `nodeid` (0: none), oldest first; returns 0 (all slots 0) when the node is not noted. */
int fuse_native_tree_fhs (fuse_native_tree_t *t, uint64_t nodeid, uint64_t fhs[4]);

/** The kernel gave back `nlookup` of a node's lookups; at none left, libfuse drops the node. */
void fuse_native_tree_forget (fuse_native_tree_t *t, uint64_t nodeid, uint64_t nlookup);

/** A successful UNLINK or RMDIR: the node at `name` in `parent` has no name any more. */
void fuse_native_tree_remove (fuse_native_tree_t *t, uint64_t parent, const char *name);

/** A successful RENAME (libfuse's rename_node, or exchange_node with `exchange`). */
void fuse_native_tree_rename (fuse_native_tree_t *t, uint64_t olddir, const char *oldname, uint64_t newdir, const char *newname, int exchange);

/**
 * True if libfuse could never lock both paths of this rename: the node holding the new name is the
 * old directory or one of its ancestors, or the node holding the old name is the new directory or
 * one of its ancestors, by libfuse's names.
 */
int fuse_native_tree_rename_locks_itself (fuse_native_tree_t *t, uint64_t olddir, const char *oldname, uint64_t newdir, const char *newname);

#endif
