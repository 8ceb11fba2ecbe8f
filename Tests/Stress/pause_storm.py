#!/usr/bin/env python3
"""Pause storm: does any `cachetool` hang behind another process that was stopped (Ctrl-Z, SIGSTOP)?

W worker threads each run `cachetool` in a loop with a verb drawn at random: `ingest` (a writer), `inspect`, `info`,
`lookup` (readers that open the store), `purge-expired` (a writer of several transactions) and now and then
`compact` (which needs the store to itself and holds the open lock for its whole copy). A pauser stops a random
running `cachetool` every 0-150 ms with SIGSTOP and resumes it with SIGCONT after 0.05-2.5 × the lock bound, or
one time in twelve after 20 s: so stops land inside `mdb_env_open`, inside a write transaction, inside a compaction,
many outlast the bound, and a wait that is not bounded would outlast its check. Every
process is started with `TOKEN_CACHE_LOCK_TIMEOUT` set to the bound.

Checked: every run ends with exit 0 or 75 (busy, retry: a lock held past the bound, or a compaction refused while
the store is in use), and when it is 75 for a lock, its message names the holder; no run takes longer than the time
it was itself stopped, plus the bound for each lock it can wait for (3), plus slack; every acknowledged `ingest` is
stored afterwards; `verify` is clean.

Usage: pause_storm.py --cachetool PATH [--workers 5] [--seconds 60] [--bound 1.0] [--work DIR] [--seed N]
Prints a JSON summary, then `pause-storm: N passed, M failed` (N runs checked, M problems). Exit status 0 only if
nothing failed. Standard library only.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import storm_support

AUTHORITY = storm_support.AUTHORITY
CLIENT = "5e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
TENANT = "3a4b5c6d-7e8f-4a0b-9c1d-2e3f4a5b6c7d"
SCOPES = "User.Read"
# Beyond the stops and the lock bounds: start-up, a fsync on a loaded machine, a compaction's copy.
SLACK_SECONDS = 10.0
# One stop in LONG_EVERY lasts LONG_STOP_SECONDS: far past any bound, so that a wait that is not bounded shows.
LONG_EVERY, LONG_STOP_SECONDS = 12, 20.0


class Storm:
    def __init__(self, args):
        self.args = args
        self.work = args.work or tempfile.mkdtemp(prefix="tc-pause-storm-")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work, mode=0o700)
        self.store, self.key = os.path.join(self.work, "store"), os.path.join(self.work, "key")
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.work, "NO_COLOR": "1",
                    "TOKEN_CACHE_LOCK_TIMEOUT": str(args.bound)}
        self.common = ["--store", self.store, "--key-file", self.key]
        self.lock = threading.Lock()
        self.running = {}      # worker -> (pidfd, the run's record)
        self.acknowledged = []  # home account ids whose ingest exited 0
        self.counts = {"runs": 0, "ok": 0, "busy": 0, "stops": 0, "stops_of_lock_holders": 0, "stops_past_bound": 0, "long_stops": 0}
        self.by_verb = {}
        self.problems = []
        self.deadline = 0.0

    def command(self, verb: str, rng: random.Random):
        if verb == "ingest":
            uid = f"{rng.getrandbits(32):08x}-0000-4000-8000-{rng.getrandbits(48):012x}"
            return ["ingest", *self.common, "--client-id", CLIENT, "--authority", AUTHORITY, "--scopes", SCOPES, "-"], \
                json.dumps(storm_support.token_response(uid, TENANT, CLIENT, SCOPES, uid, "Pause User")).encode(), f"{uid}.{TENANT}"
        if verb == "lookup":
            with self.lock:
                account = rng.choice(self.acknowledged) if self.acknowledged else None
            if account is not None:
                return ["lookup", *self.common, "--client-id", CLIENT, "--account", account, "--authority", AUTHORITY,
                        "--scopes", SCOPES], None, None
            verb = "info"
        return [verb, *self.common] + (["--json"] if verb in ("info", "compact") else []), None, None

    def worker(self, index: int):
        rng = random.Random(self.args.seed * 100 + index)
        verbs = ["ingest"] * 4 + ["inspect", "info", "lookup", "purge-expired"] * 2 + ["compact"]
        while time.monotonic() < self.deadline:
            verb = rng.choice(verbs)
            arguments, stdin, home = self.command(verb, rng)
            record = {"stopped": 0.0, "stop_started": None}
            started = time.monotonic()
            process = subprocess.Popen([self.args.cachetool, *arguments], env=self.env, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            pidfd = os.pidfd_open(process.pid)
            with self.lock:
                self.running[index] = (pidfd, record, process.pid)
            _, err = process.communicate(stdin)
            elapsed = time.monotonic() - started
            with self.lock:
                del self.running[index]
                os.close(pidfd)
                if record["stop_started"] is not None:  # exited while stopped: cannot happen, but count it
                    record["stopped"] += time.monotonic() - record["stop_started"]
                self.check_run(verb, process.returncode, err.decode(errors="replace"), elapsed, record["stopped"], home)

    def check_run(self, verb, code, err, elapsed, stopped, home):
        self.counts["runs"] += 1
        stats = self.by_verb.setdefault(verb, {"runs": 0, "ok": 0, "busy": 0, "max_unstopped_seconds": 0.0})
        stats["runs"] += 1
        unstopped = elapsed - stopped
        stats["max_unstopped_seconds"] = round(max(stats["max_unstopped_seconds"], unstopped), 2)
        if code == 0:
            self.counts["ok"] += 1
            stats["ok"] += 1
            if verb == "ingest":
                self.acknowledged.append(home)
        elif code == 75:
            self.counts["busy"] += 1
            stats["busy"] += 1
            # The holder's pid, and its program while /proc still has it (a holder exiting just then has none).
            if "lockTimeout" in err and not re.search(r"process \d+ (\([^)]*\) )?holds it", err):
                self.problems.append(f"{verb}: a lock timeout that does not name the holder: {err.strip()[:200]}")
        else:
            self.problems.append(f"{verb} exited {code}: {err.strip()[:300]}")
        if unstopped > 3 * self.args.bound + SLACK_SECONDS:
            self.problems.append(f"{verb} took {unstopped:.1f} s besides the {stopped:.1f} s it was stopped itself "
                                 f"(bound {self.args.bound} s per lock)")

    def lock_holders(self):
        """The pids holding a `flock` on the store's open.lock or writer.lock, from /proc/locks."""
        wanted = set()
        for name in ("open.lock", "writer.lock"):
            try:
                info = os.stat(os.path.join(self.store, name))
            except OSError:
                continue
            wanted.add(f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}")
        holders = set()
        with open("/proc/locks") as locks:
            for line in locks:
                fields = line.split()
                if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] in wanted:
                    holders.add(int(fields[4]))
        return holders

    def pauser(self):
        rng = random.Random(self.args.seed + 11)
        resumers = []
        next_long = time.monotonic() + 2.0
        while time.monotonic() < self.deadline:
            time.sleep(rng.uniform(0.0, 0.15))
            # Half the stops go to a process holding one of the store's locks (an opener inside mdb_env_open, a
            # writer inside its transaction, a compaction), looked for a few times; the rest to any. Every 8 s, a
            # lock holder is looked for until one is found (2 s at most) and stopped for long.
            holders = set()
            deliberate = time.monotonic() >= next_long
            if deliberate:
                next_long += 8.0
            if deliberate or rng.random() < 0.5:
                polls = 2000 if deliberate else 50
                for _ in range(polls):
                    holders = self.lock_holders()
                    if holders:
                        break
                    time.sleep(0.001)
            with self.lock:
                candidates = [worker for worker, (_, record, _) in self.running.items() if record["stop_started"] is None]
                holding = [worker for worker in candidates if self.running[worker][2] in holders]
                if holding:
                    candidates = holding
                    self.counts["stops_of_lock_holders"] += 1
                if not candidates:
                    continue
                pidfd, record, _ = self.running[rng.choice(sorted(candidates))]
                try:
                    signal.pidfd_send_signal(pidfd, signal.SIGSTOP)
                except ProcessLookupError:
                    continue
                record["stop_started"] = time.monotonic()
                self.counts["stops"] += 1
            long_stop = (deliberate and bool(holding)) or rng.randrange(LONG_EVERY) == 0
            pause = LONG_STOP_SECONDS if long_stop else rng.uniform(0.05, 2.5) * self.args.bound
            self.counts["long_stops"] += long_stop
            if pause > self.args.bound:
                self.counts["stops_past_bound"] += 1
            resumer = threading.Thread(target=self.resume, args=(pidfd, record, pause))
            resumer.start()
            resumers.append(resumer)
        for resumer in resumers:
            resumer.join()

    def resume(self, pidfd, record, after: float):
        """SIGCONT after `after` seconds (the worker keeps its pidfd open until the process has exited)."""
        time.sleep(after)
        with self.lock:
            try:
                signal.pidfd_send_signal(pidfd, signal.SIGCONT)
            except (ProcessLookupError, OSError):
                pass
            if record["stop_started"] is not None:
                record["stopped"] += time.monotonic() - record["stop_started"]
                record["stop_started"] = None

    def cachetool(self, *arguments):
        return subprocess.run([self.args.cachetool, *arguments, *self.common], env=self.env, capture_output=True,
                              text=True, timeout=300)

    def run(self):
        init = self.cachetool("init")
        if init.returncode != 0:
            sys.exit(f"pause-storm: cachetool init failed: {init.stderr.strip()}")
        started = time.monotonic()
        self.deadline = started + self.args.seconds
        threads = [threading.Thread(target=self.worker, args=(i,)) for i in range(self.args.workers)]
        threads.append(threading.Thread(target=self.pauser))
        storm_support.run_threads(threads)
        return self.check(time.monotonic() - started)

    def check(self, elapsed: float):
        problems = list(self.problems)
        stored = storm_support.checked_dump(self.cachetool, problems)
        homes = {t["home_account_id"] for t in stored.get("refresh_tokens", [])}
        lost = [home for home in self.acknowledged if home not in homes]
        problems += [f"{home}: an acknowledged ingest is not stored" for home in lost[:20]]
        summary = {"workers": self.args.workers, "seconds": round(elapsed, 1), "bound_seconds": self.args.bound,
                   "seed": self.args.seed, **self.counts, "acknowledged_ingests": len(self.acknowledged),
                   "by_verb": self.by_verb, "problems": problems[:20], "problem_count": len(problems)}
        print(json.dumps(summary, indent=1))
        print(f"pause-storm: {self.counts['runs']} passed, {len(problems)} failed")
        if not problems:
            shutil.rmtree(self.work, ignore_errors=True)
        else:
            print(f"pause-storm: the store and key are kept in {self.work}", file=sys.stderr)
        return 0 if not problems and self.counts["runs"] > 0 and self.counts["stops"] > 0 else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cachetool", required=True)
    parser.add_argument("--workers", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--bound", type=float, default=1.0, help="TOKEN_CACHE_LOCK_TIMEOUT for every run, seconds")
    parser.add_argument("--work", help="scratch directory (emptied first); default: a new temporary directory")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    sys.exit(Storm(parser.parse_args()).run())


if __name__ == "__main__":
    main()
