#!/usr/bin/env python3
"""Inspect memory: walking a whole large store keeps peak memory under a bound: `inspect` in every view, `stats`, a
purge, `verify`, a data-key rotation and a cap's eviction.

Writes a synthetic store (`cachetool bench --populate-only`: per 10 access tokens one home account with two tenant
profiles, three refresh and eight ID tokens), then runs `inspect` as a table, as JSON and as a summary, each with its
output sent to a counter, and measures the peak resident memory of cachetool and its worker child (`wait4`; mapped
store pages included); then `stats`, `purge-expired --dry-run`, `verify`, `rekey --rotate-data-key` and `cap` (a tenth
of the access tokens over it) the same way. Each must end with exit 0, account for every record (the JSON holds them
all, the table a row per record, the purge examines every token, the rotation re-seals every record, the cap evicts
exactly the excess), and stay under the bound.

Usage: inspect_memory.py --cachetool PATH [--tokens N] [--bound-mib M] [--work DIR]
Prints one line per view, then `inspect-memory: N passed, M failed`. Exit 0 only if nothing failed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROW_PREFIXES = tuple("  " + kind + " " for kind in ("account", "access", "pop", "refresh", "id", "app"))


def measure(arguments, env, consume):
    """Runs arguments with stdout into a pipe read by consume(file); returns (exit code, peak bytes, seconds, result)."""
    read_end, write_end = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os.dup2(write_end, 1)
        os.execve(arguments[0], arguments, env)
    os.close(write_end)
    with os.fdopen(read_end, "rb", buffering=1 << 20) as stream:
        result = consume(stream)
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024, time.monotonic() - start, result


def count_rows(stream):
    return sum(1 for line in stream if line.decode("utf-8", "replace").startswith(ROW_PREFIXES))


def count_json(stream):
    document = json.load(stream)
    return sum(len(document[name]) for name in ("accounts", "access_tokens", "refresh_tokens", "id_tokens", "app_metadata"))


def summary_total(stream):
    document = json.load(stream)
    return sum(kind["total"] for kind in document["records"].values())


def stats_total(stream):
    document = json.load(stream)
    return sum(document["records"].values())


def purge_examined(stream):
    return json.load(stream)["examined"]


def verified_total(stream):
    return sum(json.load(stream)["verified"].values())


def resealed(stream):
    return json.load(stream)["resealed"]


def evicted(stream):
    return json.load(stream)["evicted"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cachetool", required=True)
    parser.add_argument("--tokens", type=int, default=1_000_000)
    parser.add_argument("--bound-mib", type=int, default=64)
    parser.add_argument("--work", help="scratch directory (emptied first); default: a new temporary directory")
    args = parser.parse_args()

    work = args.work or tempfile.mkdtemp(prefix="tc-inspect-memory-")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, mode=0o700)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work, "NO_COLOR": "1"}
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "unknown CPU")
    try:
        subprocess.run(
            [args.cachetool, "bench", "--tokens", str(args.tokens), "--populate-only", "--dir", work],
            env=env, check=True, stdout=subprocess.DEVNULL,
        )
        store = ["--store", os.path.join(work, "store"), "--key-file", os.path.join(work, "key")]
        info = json.loads(subprocess.run([args.cachetool, "info", "--json"] + store, env=env, check=True, capture_output=True).stdout)
        records = sum(info["records"].values())
        views = [
            ("table", ["inspect"], count_rows),
            ("json", ["inspect", "--json"], count_json),
            ("summary", ["inspect", "--summary", "--json"], summary_total),
            ("stats", ["stats", "--json"], stats_total),
            ("purge dry run", ["purge-expired", "--dry-run", "--json"], purge_examined),
            ("verify", ["verify", "--json"], verified_total),
            # These two change the store, so they come last: every record re-sealed, then a tenth of the access
            # tokens evicted (all of one age in this population: the sampled eviction does it all).
            ("data-key rotation", ["rekey", "--rotate-data-key", "--json"], resealed),
            ("cap", ["cap", "--access-tokens", str(info["records"]["AccessToken"] * 9 // 10), "--json"], evicted),
        ]
        tokens = info["records"]["AccessToken"] + info["records"]["RefreshToken"]
        expectations = {"purge dry run": tokens, "cap": info["records"]["AccessToken"] - info["records"]["AccessToken"] * 9 // 10}
        passed = failed = 0
        for name, arguments, consume in views:
            status, peak, seconds, shown = measure([args.cachetool] + arguments + store, env, consume)
            expected = expectations.get(name, records)
            ok = status == 0 and shown == expected and peak < args.bound_mib << 20
            passed, failed = passed + ok, failed + (not ok)
            print(
                f"inspect-memory: {name}: exit {status}, {shown:,} of {expected:,} records, peak {peak / (1 << 20):.1f} MiB "
                f"(bound {args.bound_mib} MiB), {seconds:.1f} s, {args.tokens:,} access tokens, {cpu}"
                + ("" if ok else "  FAILED")
            )
        print(f"inspect-memory: {passed} passed, {failed} failed")
        return 0 if failed == 0 else 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
