/** @module The slice of fuse-native 2.2.6 that mnemo uses; the package ships no types. */
declare module 'fuse-native' {
  type Cb<T = never> = [T] extends [never] ? (code: number) => void : (code: number, value?: T) => void;

  export interface FuseStat {
    mode: number;
    uid: number;
    gid: number;
    size: number;
    nlink?: number;
    ino?: number;
    blksize?: number;
    blocks?: number;
    atime: Date | number;
    mtime: Date | number;
    ctime: Date | number;
  }

  export interface FuseStatfs {
    bsize: number;
    frsize: number;
    blocks: number;
    bfree: number;
    bavail: number;
    files: number;
    ffree: number;
    favail: number;
    fsid: number;
    flag: number;
    namemax: number;
  }

  /** Handler signatures as the binding really calls them (see notes/fuse-native.md §1.2). */
  export interface FuseOps {
    init?(cb: Cb): void;
    statfs?(path: string, cb: Cb<FuseStatfs>): void;
    getattr?(path: string, cb: Cb<FuseStat>): void;
    readdir?(path: string, cb: Cb<string[]>): void;
    open?(path: string, flags: number, cb: Cb<number>): void;
    create?(path: string, mode: number, cb: Cb<number>): void;
    read?(path: string, fh: number, buf: Buffer, len: number, pos: number, cb: Cb): void;
    write?(path: string, fh: number, buf: Buffer, len: number, pos: number, cb: Cb): void;
    truncate?(path: string, size: number, cb: Cb): void;
    ftruncate?(path: string, fh: number, size: number, cb: Cb): void;
    flush?(path: string, fh: number, cb: Cb): void;
    fsync?(path: string, datasync: number, fh: number, cb: Cb): void;
    release?(path: string, fh: number, cb: Cb): void;
    unlink?(path: string, cb: Cb): void;
    rename?(src: string, dest: string, cb: Cb): void;
    mkdir?(path: string, mode: number, cb: Cb): void;
    rmdir?(path: string, cb: Cb): void;
    chmod?(path: string, mode: number, cb: Cb): void;
    chown?(path: string, uid: number, gid: number, cb: Cb): void;
    /** Milliseconds since the epoch; null (the rebuilt binding) is UTIME_OMIT. */
    utimens?(path: string, atime: number | null, mtime: number | null, cb: Cb): void;
    link?(src: string, dest: string, cb: Cb): void;
    symlink?(src: string, dest: string, cb: Cb): void;
    mknod?(path: string, mode: number, dev: number, cb: Cb): void;
  }

  export interface FuseOptions {
    force?: boolean;
    mkdir?: boolean;
    autoUnmount?: boolean;
    debug?: boolean;
    timeout?: number | false;
    [key: string]: unknown;
  }

  class Fuse {
    constructor(mnt: string, ops: FuseOps, opts?: FuseOptions);
    readonly mnt: string;
    mount(cb: (err: Error | null) => void): void;
    unmount(cb: (err: Error | null) => void): void;
    protected _fuseOptions(): string;
    static unmount(mnt: string, cb: (err: Error | null) => void): void;
    static readonly EPERM: number;
    static readonly ENOENT: number;
    static readonly EIO: number;
    static readonly EBADF: number;
    static readonly EACCES: number;
    static readonly EBUSY: number;
    static readonly EAGAIN: number;
    static readonly EEXIST: number;
    static readonly ENOTDIR: number;
    static readonly EISDIR: number;
    static readonly EINVAL: number;
    static readonly EFBIG: number;
    static readonly ENOSPC: number;
    static readonly EROFS: number;
    static readonly ENAMETOOLONG: number;
    static readonly ENOSYS: number;
    static readonly ENOTEMPTY: number;
    static readonly EILSEQ: number;
    static readonly ENOTCONN: number;
    static readonly ETIMEDOUT: number;
  }
  export default Fuse;
}
