#!/usr/bin/env python3
"""Tamper sweep: one flipped bit anywhere in a store's data file must never crash cachetool or forge a secret.

Builds a small store (`init`, `sample-data`), remembers every secret it holds, then for each chosen byte of
`data.mdb` (records, keys, the header record, B-tree pages, LMDB's meta pages) flips one bit on a fresh copy and runs
`cachetool verify --json` and `cachetool inspect --json --reveal-secrets` on it. Checked for every flip: both end
normally (never by a signal), with a documented verdict (0 clean, 65 damaged, 77 wrong key, 78 unsupported format),
and inspect shows no secret that was not stored (authentication must never let a damaged record through).

Usage: tamper_sweep.py --cachetool PATH [--flips N | --flips all] [--seed S] [--work DIR]
Prints a summary, then `tamper-sweep: N passed, M failed` (N flips checked). Exit 0 only if nothing failed.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ALLOWED = {0: "clean", 65: "damage reported", 77: "wrong key", 78: "unsupported format"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cachetool", required=True)
    parser.add_argument("--flips", default="300", help="how many bytes to flip (seeded choice), or 'all'")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--work", help="scratch directory (emptied first); default: a new temporary directory")
    args = parser.parse_args()

    work = args.work or tempfile.mkdtemp(prefix="tc-tamper-sweep-")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, mode=0o700)
    key = os.path.join(work, "key")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work, "NO_COLOR": "1"}

    def cachetool(store, *arguments):
        return subprocess.run([args.cachetool, *arguments, "--store", store, "--key-file", key], env=env,
                              capture_output=True, text=True, timeout=60)

    pristine = os.path.join(work, "pristine")
    for step in (["init"], ["sample-data"]):
        run = cachetool(pristine, *step)
        if run.returncode != 0:
            sys.exit(f"tamper-sweep: {step[0]} failed: {run.stderr.strip()}")
    dump = json.loads(cachetool(pristine, "inspect", "--json", "--reveal-secrets").stdout)
    kinds = ("access_tokens", "refresh_tokens", "id_tokens")
    stored_secrets = {record["secret"] for kind in kinds for record in dump[kind]}
    with open(os.path.join(pristine, "data.mdb"), "rb") as f:
        original = f.read()

    rng = random.Random(args.seed)
    positions = list(range(len(original)))
    if args.flips != "all":
        positions = sorted(rng.sample(positions, min(int(args.flips), len(positions))))

    problems, verdicts = [], {}
    copy = os.path.join(work, "copy")
    for position in positions:
        shutil.rmtree(copy, ignore_errors=True)
        os.makedirs(copy, mode=0o700)
        damaged = bytearray(original)
        damaged[position] ^= 1 << rng.randrange(8)
        path = os.path.join(copy, "data.mdb")
        with open(path, "wb") as f:
            f.write(damaged)
        os.chmod(path, 0o600)
        for verb in (["verify", "--json"], ["inspect", "--json", "--reveal-secrets"]):
            try:
                run = cachetool(copy, *verb)
            except subprocess.TimeoutExpired:
                problems.append(f"byte {position}: {verb[0]} hung")
                continue
            if run.returncode < 0 or run.returncode not in ALLOWED:
                problems.append(f"byte {position}: {verb[0]} ended with {run.returncode}: {run.stderr.strip()[:200]}")
                continue
            verdicts[f"{verb[0]} {ALLOWED[run.returncode]}"] = verdicts.get(f"{verb[0]} {ALLOWED[run.returncode]}", 0) + 1
            if verb[0] == "inspect" and run.stdout.strip():
                try:
                    shown = json.loads(run.stdout)
                except ValueError:
                    problems.append(f"byte {position}: inspect printed invalid JSON")
                    continue
                forged = {r.get("secret") for kind in kinds for r in shown.get(kind, [])} - stored_secrets
                if forged:
                    problems.append(f"byte {position}: inspect returned a secret that was never stored")

    print(json.dumps({"seed": args.seed, "file_bytes": len(original), "flips": len(positions), "verdicts": verdicts,
                      "problems": problems[:20], "problem_count": len(problems)}, indent=1))
    failed = {problem.split(":")[0] for problem in problems}
    print(f"tamper-sweep: {len(positions) - len(failed)} passed, {len(failed)} failed")
    if problems:
        print(f"tamper-sweep: the pristine store and key are kept in {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
