"""The bench's file workloads, run as a child process per target (never inside a FUSE server).

usage: workload.py full <dir> <files>    save/read/stat/ls -R/grep -r/100 KiB rewrite/atomic saves
       workload.py small <dir> <files>   save/read/stat only (the engine rows, engines.ts)
       workload.py save <dir> <files>    saves only (the serving thread's CPU per save, cpu.ts)
       workload.py prose <dir> <files> <seed>   writes f00000.md… with prose-like text drawn by seed
                                          (cpu.ts: the same files again with another seed are edits)
       workload.py scale <dir> <count>   latencies in a directory holding <count> files
Prints one JSON object: seconds per phase (full), or median/p99 milliseconds per op (scale).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

CACHE_SLEEP = 1.1  # past FUSE's 1 s entry/attr timeouts, so stat and open really reach the daemon


def body(i, size):
    line = f"memory {i}: the agent noted something worth keeping about task {i % 97}\n"
    if i % 50 == 0:
        line = f"memory {i}: needle in the haystack\n"
    text = (line * (size // len(line) + 1))[:size]
    return text.encode()


def full(base, n, small=False):
    os.makedirs(base, exist_ok=True)
    half = n // 2
    dirs = [os.path.join(base, "a"), os.path.join(base, "b"), os.path.join(base, "c")]
    for d in dirs:
        os.mkdir(d)
    paths = [os.path.join(dirs[0] if i < half else dirs[1], f"f{i:05d}.md") for i in range(n)]
    out = {}

    t = time.perf_counter()
    for i, p in enumerate(paths):
        with open(p, "wb") as f:
            f.write(body(i, 4096))
    out["save"] = time.perf_counter() - t

    time.sleep(CACHE_SLEEP)
    t = time.perf_counter()
    total = 0
    for p in paths:
        with open(p, "rb") as f:
            total += len(f.read())
    out["read"] = time.perf_counter() - t
    if total != 4096 * n:
        raise SystemExit(f"read back {total} bytes, expected {4096 * n}")

    time.sleep(CACHE_SLEEP)
    t = time.perf_counter()
    for p in paths:
        os.stat(p)
    out["stat"] = time.perf_counter() - t
    if small:
        return out

    time.sleep(CACHE_SLEEP)
    t = time.perf_counter()
    subprocess.run(["ls", "-R", base], check=True, stdout=subprocess.DEVNULL)
    out["ls_r"] = time.perf_counter() - t

    time.sleep(CACHE_SLEEP)
    t = time.perf_counter()
    r = subprocess.run(["grep", "-r", "-l", "needle", base], stdout=subprocess.PIPE, check=True)
    out["grep_r"] = time.perf_counter() - t
    hits = len(r.stdout.splitlines())
    if hits != len(range(0, n, 50)):
        raise SystemExit(f"grep found {hits} files")

    big = os.path.join(base, "big.md")
    content = body(7, 100 * 1024)
    t = time.perf_counter()
    for _ in range(200):
        with open(big, "wb") as f:
            f.write(content)
    out["rewrite"] = time.perf_counter() - t

    t = time.perf_counter()
    for i in range(500):
        fd, tmp = tempfile.mkstemp(dir=dirs[2])
        with os.fdopen(fd, "wb") as f:
            f.write(body(i, 4096))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(dirs[2], f"s{i:04d}.md"))
    out["atomic"] = time.perf_counter() - t
    return out


def saves(base, n):
    os.makedirs(base, exist_ok=True)
    t = time.perf_counter()
    for i in range(n):
        with open(os.path.join(base, f"f{i:05d}.md"), "wb") as f:
            f.write(body(i, 4096))
    return {"save": time.perf_counter() - t}


def prose(base, n, seed):
    """4 KiB notes whose words follow a Zipf law over 5,000 (about 250 distinct words a note, as in
    prose or code); body() repeats one line, whose dozen words an index takes in and out cheaply."""
    import random
    rng = random.Random(seed)
    vocab = ["w%xq" % i for i in range(5000)]
    weights = [1.0 / (i + 1) ** 1.1 for i in range(5000)]
    texts = [(" ".join(rng.choices(vocab, weights=weights, k=1000)))[:4096].encode() for _ in range(n)]
    os.makedirs(base, exist_ok=True)
    t = time.perf_counter()
    for i, text in enumerate(texts):
        with open(os.path.join(base, f"f{i:05d}.md"), "wb") as f:
            f.write(text)
    return {"prose": time.perf_counter() - t}


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


def scale(d, count):
    names = sorted(os.listdir(d))
    if len(names) < count:
        raise SystemExit(f"{d} holds {len(names)} entries, expected {count}")
    sample = [os.path.join(d, x) for x in names[:: max(1, len(names) // 200)]][:200]
    out = {}
    ls = []
    for _ in range(21):  # a median of 7 swung by 2x between runs on a shared host
        t = time.perf_counter()
        os.listdir(d)
        ls.append(time.perf_counter() - t)
    out["list"] = pct(ls, 0.5)
    for phase in ("stat", "read", "save"):
        time.sleep(CACHE_SLEEP)
        lat = []
        for p in sample:
            t = time.perf_counter()
            if phase == "stat":
                os.stat(p)
            elif phase == "read":
                with open(p, "rb") as f:
                    f.read()
            else:
                with open(p, "wb") as f:
                    f.write(body(len(lat) + 1, 4096))
            lat.append(time.perf_counter() - t)
        out[phase] = pct(lat, 0.5)
        out[phase + "_p99"] = pct(lat, 0.99)
    return out


if __name__ == "__main__":
    mode, target, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode in ("full", "small"):
        print(json.dumps(full(target, n, mode == "small")))
    elif mode == "save":
        print(json.dumps(saves(target, n)))
    elif mode == "prose":
        print(json.dumps(prose(target, n, int(sys.argv[4]))))
    else:
        print(json.dumps(scale(target, n)))
