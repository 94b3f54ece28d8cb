#!/usr/bin/env python3
"""Classify the failing assertions of a pjdfstest run against a mnemo mount.

Usage: pjdfstest-classify.py OUT_FILE [--list CLASS] [--real]

OUT_FILE is what a `prove -f` run of pjdfstest wrote (the README shows one; a wrapper script that runs
it group by group writes the same).
Every failing assertion, and every planned assertion that never ran, gets one class: either a
reason mnemo refuses the thing by design (README, "POSIX conformance"), "cascade" (a time,
owner or link-count check that follows a refused step in the same file, which no generic rule can
tie to it; the README's figure says they were checked by hand), or "real" (a bug to fix). The
rules are generic where the failing command says enough (a symlink refused with EPERM, a
permission check as another uid), and per test file where only pjdfstest's source says why
(a file filled from /dev/random is not UTF-8, so it is never stored and later steps find
nothing). A failure that follows a refused creation in the same test file, on the same name,
is that refusal's cascade.

Prints one line per class (assertions, files) and the totals; --real (or --list CLASS)
also prints each of those assertions.
"""
import argparse
import re
from collections import Counter, defaultdict

CLASSES = {
    'links': 'hard links, symlinks, fifos, sockets and device files are refused with EPERM (and every step on them after)',
    'perms': 'modes are stored but not enforced (no default_permissions): a check as another uid or gid cannot give EACCES/EPERM',
    'chown-nonroot': 'ownership changes by a non-root caller are not checked (no default_permissions)',
    'size': 'a file is at most 102,400 bytes: EFBIG past it',
    'utf8': 'content that is not UTF-8 is never stored: the close fails (EILSEQ) and the file is gone',
    'path-limits': 'paths over 1,024 bytes or 20 segments are refused (ENAMETOOLONG / EINVAL), so the long path cannot be built',
    'special-mount': 'needs a second file system mounted inside the mount, or a read-only remount of it',
    'cascade': 'a time, owner or nlink check after a refused step in the same test file (a symlink or special file, another uid\'s change that should have been refused): each checked by hand',
    'real': 'not by design: a bug',
}

# Which refusal a cascade is blamed on when a step touches names of several.
PRIORITY = ['links', 'path-limits', 'size', 'utf8', 'perms', 'chown-nonroot']
NAME = re.compile(r'pjdfstest_[0-9a-f]{32}|[0-9a-f]{100,}')
FAIL = re.compile(r"^not ok (\d+)(?: - tried '(.*)', expected (\S+), got (.*))?$")
FILE = re.compile(r'^(\S+/tests/(\w+)/(\d+)\.t) \.\.')
PLAN = re.compile(r'^(\S+/tests/(\w+)/(\d+)\.t) \(Wstat: \d+.* Tests: (\d+) Failed: (\d+)\)')
PLANNED = re.compile(r'You planned (\d+) tests? but ran (\d+)')
REFUSED_OPS = {'symlink', 'link', 'mknod', 'mkfifo', 'bind', 'connect', 'lchmod', 'readlink'}
UID_SWITCH = re.compile(r'^(-[ug] \S+ )+')

# Per test file: assertion numbers (or 'bare' for test_check lines, '*' for all) → class,
# where the failing command alone does not say why. Each from reading the test's source.
FILE_RULES = {
    # dd if=/dev/random of=n0: random bytes are not UTF-8, the file is never stored.
    'ftruncate/00': {range(8, 13): 'utf8'},
    'truncate/00': {range(8, 13): 'utf8'},
    # ETXTBSY: cp of the pjdfstest binary (> 102,400 bytes, not UTF-8) then exec it.
    'ftruncate/11': {'*': 'size'},
    'truncate/11': {'*': 'size'},
    'open/20': {'*': 'size'},
    # > 2 GB files.
    'open/25': {'*': 'size'},
    # ELOOP: symlink loops.
    'open/12': {'*': 'links'},
    # O_NOFOLLOW on a symlink; fifos with O_NONBLOCK; sockets.
    'open/16': {'*': 'links'},
    'open/17': {'*': 'links'},
    'open/24': {'*': 'links'},
    # mount a tmpfs / md device inside, remount read-only.
    'rmdir/13': {'*': 'special-mount'},
    'rename/15': {'*': 'special-mount'},
    'link/14': {'*': 'links'},
    # rename of a directory updates its .. link: nlink.
    'rename/24': {'bare': 'cascade'},
    'rename/23': {'*': 'links'},
    # The symlink is made with `ln -s` (no assertion): every step on it finds nothing.
    'utimensat/05': {range(4, 5): 'links', range(7, 10): 'links', range(12, 14): 'links', range(15, 16): 'links'},
    # Probes whether atime was stored as set; it was not (atime is the mtime), so it bails out.
    'utimensat/09': {'*': 'cascade'},
    # An open(O_CREAT) as another uid that should have failed made a file: its directory is not empty.
    'open/08': {range(3, 4): 'perms'},
}
# Bare test_check failures (no command shown) in these files compare times or link counts.
ATTR_CHECK_FILES = {'chmod/00', 'chown/00', 'ftruncate/00', 'mkdir/00', 'open/00', 'rename/00', 'rename/22',
                    'rmdir/00', 'truncate/00', 'unlink/00', 'utimensat/05', 'utimensat/08', 'link/00', 'mkfifo/00',
                    'mknod/00', 'mknod/11', 'symlink/00', 'rename/24', 'unlink/14'}


def names_in(cmd):
    return set(NAME.findall(cmd))


def classify_file(key, fails, missing):
    """Yields (number, class, line) for each failure of one test file, in order."""
    # Names whose creation was refused by design, and names a check as another uid wrongly let
    # through: later failures on them in the same file are that refusal's cascade.
    tainted = {}
    rules = FILE_RULES.get(key, {})

    def ruled(n, bare):
        for k, cls in rules.items():
            if k == '*' or (k == 'bare' and bare) or (isinstance(k, range) and n in k):
                return cls
        return None

    def taint(cls, *texts):
        for t in texts:
            for name in names_in(t):
                tainted.setdefault(name, cls)

    for n, cmd, expected, got, line in fails:
        cls = ruled(n, cmd is None)
        if cls:
            yield n, cls, line
            continue
        if cmd is None:
            yield n, ('cascade' if key in ATTR_CHECK_FILES else 'real'), line
            continue
        switched = UID_SWITCH.match(cmd)
        body = cmd[switched.end():] if switched else cmd
        body = re.sub(r'^-- ', '', body)
        op = body.split(' ', 1)[0]
        args = body.split(' ')[1:]
        if op in REFUSED_OPS or re.search(r' : (symlink|link|mknod|mkfifo|bind|connect) ', body):
            taint('links', *args[:2])
            yield n, 'links', line
            continue
        if max((len(a) for a in args), default=0) > 1024 or any(a.count('/') >= 20 for a in args):
            taint('path-limits', *args)
            yield n, 'path-limits', line
            continue
        sizes = [int(x) for x in re.findall(r'(?:truncate|ftruncate) (?:\S+ )?(\d+)', body)]
        if got == 'EFBIG' or (expected == '0' and any(x > 102400 for x in sizes)):
            taint('size', *args[:1])
            yield n, 'size', line
            continue
        if switched and re.fullmatch(r'\(?(EACCES|EPERM)(\|(EACCES|EPERM))?\)?', expected) and got != expected:
            cls = 'chown-nonroot' if op in ('chown', 'lchown') else 'perms'
            taint(cls, *args)
            yield n, cls, line
            continue
        is_errno = got.startswith('E')
        # An expected value built from an earlier step's output (`inode=$(lstat …)`) that failed.
        if 'ENOENT' in expected.split(',')[1:] or expected.startswith('ENOENT,') or (expected == 'ENOENT' and op in ('stat', 'lstat')):
            hit = sorted((tainted[x] for x in names_in(body) if x in tainted), key=PRIORITY.index) or sorted(tainted.values(), key=PRIORITY.index)
            if hit:
                yield n, hit[0], line
                continue
        fields = args[-1] if op in ('stat', 'lstat', 'fstat') and args else ''
        # Ownership that a non-root chown changed (it should have been refused) is that chown's cascade.
        if re.search(r'\b(uid|gid)\b', fields) and any(tainted.get(x) == 'chown-nonroot' for x in names_in(body)):
            yield n, 'chown-nonroot', line
            continue
        if re.search(r'\b(uid|gid|ctime|mtime|atime|birthtime|nlink|inode)(_ns)?\b', fields) and not is_errno:
            yield n, 'cascade', line
            continue
        if op in ('chown', 'lchown') and expected == '0' and got != 'ENOENT':
            yield n, 'cascade', line
            continue
        # The test's own directory (named before a `cd` into it) still holds what a refusal left.
        if op == 'rmdir' and got in ('ENOTEMPTY', 'EEXIST') and tainted:
            yield n, sorted(tainted.values(), key=PRIORITY.index)[0], line
            continue
        hit = sorted((tainted[x] for x in names_in(body) if x in tainted), key=PRIORITY.index)
        if hit:
            # What it touched is part of the cascade too (a rename onto a name that never existed).
            taint(hit[0], *args)
            yield n, hit[0], line
            continue
        yield n, 'real', line
    for _ in range(missing):
        yield None, (rules.get('*') or 'real'), f'(planned, never ran: {key})'


def parse(path):
    files = defaultdict(list)
    missing = Counter()
    current = None
    with open(path, encoding='utf-8', errors='replace') as f:
        report = False
        plan_key = None
        for raw in f:
            line = raw.rstrip('\n')
            m = FILE.match(line)
            if m:
                current = f'{m.group(2)}/{m.group(3)}'
            if line.startswith('Test Summary Report'):
                report = True
            if line.startswith('=== group'):
                report = False
            if report:
                p = PLAN.match(line)
                if p:
                    plan_key = f'{p.group(2)}/{p.group(3)}'
                pl = PLANNED.search(line)
                if pl and plan_key:
                    missing[plan_key] += max(0, int(pl.group(1)) - int(pl.group(2)))
                if 'No plan found' in line and plan_key:
                    missing[plan_key] += 1
                continue
            fm = FAIL.match(line)
            if fm and current and '# TODO' not in line:
                n = int(fm.group(1))
                files[current].append((n, fm.group(2), fm.group(3), fm.group(4), line))
    return files, missing


def main():
    # The options may come before or after the file (`--real out.txt` read --real as the file).
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0], usage='%(prog)s OUT_FILE [--list CLASS] [--real]')
    ap.add_argument('out_file')
    ap.add_argument('--real', action='store_true', help='also print each real failure')
    ap.add_argument('--list', metavar='CLASS', help='also print each assertion of CLASS')
    args = ap.parse_args()
    files, missing = parse(args.out_file)
    want = args.list if args.list is not None else ('real' if args.real else None)
    per_class = Counter()
    per_class_files = defaultdict(set)
    file_classes = defaultdict(set)
    shown = []
    for key in sorted(set(files) | set(missing)):
        for n, cls, line in classify_file(key, files.get(key, []), missing.get(key, 0)):
            per_class[cls] += 1
            per_class_files[cls].add(key)
            file_classes[key].add(cls)
            if cls == want:
                shown.append(f'{key} {line[:300]}')
    total = sum(per_class.values())
    for cls in CLASSES:
        if per_class[cls]:
            print(f'{cls:14} {per_class[cls]:5} asserts in {len(per_class_files[cls]):3} files  ({CLASSES[cls]})')
    print(f'{"total":14} {total:5} asserts; by design {total - per_class["real"] - per_class["cascade"]}, cascade {per_class["cascade"]}, real {per_class["real"]}')
    failing = len(file_classes)
    real_files = sum(1 for c in file_classes.values() if 'real' in c)
    attr_files = sum(1 for c in file_classes.values() if 'cascade' in c and 'real' not in c)
    print(f'{"files":14} {failing:5} failing; by design only {failing - real_files - attr_files}, with cascade {attr_files}, with real {real_files}')
    for s in shown:
        print(s)


if __name__ == '__main__':
    main()
