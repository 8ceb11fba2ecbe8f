#!/usr/bin/env python3
"""Kill storm: does the store lose an acknowledged write when writers are SIGKILLed at random?

W writer threads each run `cachetool ingest` in a loop. Every other write signs in a new account that is never written
again, so that losing it cannot be hidden by a later write; the others go to a few accounts of the writer's own, so
that those are written many times and their refresh tokens rotate (each response carries new tokens). A killer
SIGKILLs a random running `cachetool` every 0-120 ms, through a pidfd (never a reused pid). A write counts as
acknowledged only when its process exited 0.

Checked afterwards, for every account: the stored refresh and access tokens are those of the last acknowledged write
of that account or of a later attempt (a killed process may have committed before it died, but the state may never
fall behind what was acknowledged). Also: `verify` is clean, `lookup` answers with the stored token (every rotated
account and 200 of the others), the
newest LMDB meta-page transaction id never stepped back while the storm ran (sampled every 2 ms), and no `cachetool`
failed in any way other than being killed.

Usage: kill_storm.py --cachetool PATH [--writers 6] [--seconds 60] [--accounts-per-writer 8] [--work DIR] [--seed N]
Prints a JSON summary, then `kill-storm: N passed, M failed` (N acknowledged writes whose account state was
checked, M problems). Exit status 0 only if nothing failed. Standard library only.
"""
import argparse
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

import storm_support

AUTHORITY = storm_support.AUTHORITY
CLIENT = "7ab3e8c4-1d55-4d6e-9a0b-2f3c4d5e6f70"
TENANT = "9c2f7a10-4b3e-4d8a-8f61-0e5d2c1b3a47"
SCOPES = "User.Read Mail.Read"


def token_response(uid: str, generation: int, rng: random.Random) -> dict:
    """A token-endpoint response for account `uid`; its tokens are unique to this attempt."""
    return storm_support.token_response(uid, TENANT, CLIENT, SCOPES, f"{uid}-{generation}-{rng.getrandbits(64):016x}",
                                        "Storm User")


def newest_meta_txnid(data_file: str):
    """The larger transaction id of LMDB's two meta pages (page header 16 bytes, id at offset 128 of MDB_meta)."""
    try:
        with open(data_file, "rb") as f:
            pages = f.read(8192)
        return max(struct.unpack_from("<Q", pages, 16 + 128)[0], struct.unpack_from("<Q", pages, 4096 + 16 + 128)[0])
    except (OSError, struct.error):
        return None


class Storm:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.work = args.work or tempfile.mkdtemp(prefix="tc-kill-storm-")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work, mode=0o700)
        self.store, self.key = os.path.join(self.work, "store"), os.path.join(self.work, "key")
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.work, "NO_COLOR": "1"}
        self.common = ["--store", self.store, "--key-file", self.key]
        self.lock = threading.Lock()
        self.running = {}          # writer -> pidfd of its running cachetool
        self.attempts = {}         # home account id -> [(attempt number, access token, refresh token, acknowledged)]
        self.counts = {"runs": 0, "acknowledged": 0, "killed": 0, "kills_sent": 0}
        self.failures = []         # strings: everything that is not a kill or an acknowledgement
        self.meta_step_backs = []
        self.deadline = 0.0

    def cachetool(self, *arguments, stdin=None):
        return subprocess.run([self.args.cachetool, *arguments, *self.common], env=self.env, input=stdin,
                              capture_output=True, text=True)

    def writer(self, index: int):
        rng = random.Random(self.args.seed * 1000 + index)
        uids = [f"{index:04x}{n:04x}-0000-4000-8000-{rng.getrandbits(48):012x}" for n in range(self.args.accounts_per_writer)]
        generation = 0
        while time.monotonic() < self.deadline:
            generation += 1
            if generation % 2:
                uid = f"{index:04x}{0xffff:04x}-{generation >> 16:04x}-4{generation & 0xfff:03x}-8000-{rng.getrandbits(48):012x}"
            else:
                uid = rng.choice(uids)
            home = f"{uid}.{TENANT}"
            body = token_response(uid, generation, rng)
            with self.lock:
                attempts = self.attempts.setdefault(home, [])
                attempt = [len(attempts), body["access_token"], body["refresh_token"], False]
                attempts.append(attempt)
            process = subprocess.Popen([self.args.cachetool, "ingest", *self.common, "--client-id", CLIENT,
                                        "--authority", AUTHORITY, "--scopes", SCOPES, "-"], env=self.env,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            pidfd = os.pidfd_open(process.pid)
            with self.lock:
                self.running[index] = pidfd
            try:
                _, err = process.communicate(json.dumps(body).encode())
            except BrokenPipeError:
                _, err = b"", b""
                process.wait()
            with self.lock:
                del self.running[index]
                os.close(pidfd)
                self.counts["runs"] += 1
                if process.returncode == 0:
                    attempt[3] = True   # acknowledged: only now
                    self.counts["acknowledged"] += 1
                elif process.returncode == -signal.SIGKILL:
                    self.counts["killed"] += 1
                else:
                    self.failures.append(f"ingest exited {process.returncode}: {err.decode(errors='replace').strip()[:200]}")

    def killer(self):
        rng = random.Random(self.args.seed + 7)
        while time.monotonic() < self.deadline:
            time.sleep(rng.uniform(0.0, 0.12))
            with self.lock:
                if not self.running:
                    continue
                pidfd = self.running[rng.choice(sorted(self.running))]
                try:
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                    self.counts["kills_sent"] += 1
                except ProcessLookupError:
                    pass

    def monitor(self):
        """Records each time the newest meta transaction id falls below the highest seen (once per event)."""
        data_file, newest, behind = os.path.join(self.store, "data.mdb"), 0, False
        while time.monotonic() < self.deadline:
            txnid = newest_meta_txnid(data_file)
            if txnid is not None:
                if txnid < newest and not behind:
                    self.meta_step_backs.append((newest, txnid))
                behind = txnid < newest
                newest = max(newest, txnid)
            time.sleep(0.002)

    def run(self):
        init = self.cachetool("init")
        if init.returncode != 0:
            sys.exit(f"kill-storm: cachetool init failed: {init.stderr.strip()}")
        started = time.monotonic()
        self.deadline = started + self.args.seconds
        threads = [threading.Thread(target=self.writer, args=(i,)) for i in range(self.args.writers)]
        threads += [threading.Thread(target=self.killer), threading.Thread(target=self.monitor)]
        storm_support.run_threads(threads)
        return self.check(time.monotonic() - started)

    def check(self, elapsed: float):
        problems = list(self.failures)
        problems += [f"newest meta transaction id stepped back from {a} to {b}" for a, b in self.meta_step_backs]
        stored = storm_support.checked_dump(self.cachetool, problems, reveal=True)
        stored_rt = {t["home_account_id"]: t["secret"] for t in stored.get("refresh_tokens", [])}
        stored_at = {t["home_account_id"]: t["secret"] for t in stored.get("access_tokens", [])}
        checked = 0
        rotated = [home for home, attempts in self.attempts.items() if len(attempts) > 1]
        single = [home for home, attempts in self.attempts.items() if len(attempts) == 1]
        looked_up = set(rotated) | set(random.Random(self.args.seed).sample(single, min(len(single), 200)))
        for home, attempts in self.attempts.items():
            acknowledged = [a for a in attempts if a[3]]
            if not acknowledged:
                continue
            last = acknowledged[-1][0]
            checked += len(acknowledged)
            allowed_at = {a[1] for a in attempts[last:]}
            allowed_rt = {a[2] for a in attempts[last:]}
            if stored_at.get(home) not in allowed_at:
                problems.append(f"{home}: access token of acknowledged attempt {last} lost")
            if stored_rt.get(home) not in allowed_rt:
                problems.append(f"{home}: refresh token of acknowledged attempt {last} lost")
            if home not in looked_up:
                continue
            lookup = self.cachetool("lookup", "--json", "--reveal-secrets", "--client-id", CLIENT, "--account", home,
                                    "--authority", AUTHORITY, "--scopes", SCOPES)
            try:
                answer = json.loads(lookup.stdout)
                if answer["outcome"] != "hit" or answer["access_token"]["secret"] != stored_at.get(home):
                    problems.append(f"{home}: lookup answered {answer['outcome']} with another token")
            except (ValueError, KeyError, TypeError):
                problems.append(f"{home}: lookup exited {lookup.returncode}: {lookup.stderr.strip()[:200]}")
        summary = {
            "writers": self.args.writers, "seconds": round(elapsed, 1), "seed": self.args.seed, **self.counts,
            "accounts": len(self.attempts), "acknowledged_writes_checked": checked, "lookups": len(looked_up),
            "meta_step_backs": len(self.meta_step_backs), "problems": problems[:20], "problem_count": len(problems),
        }
        print(json.dumps(summary, indent=1))
        print(f"kill-storm: {checked} passed, {len(problems)} failed")
        if not self.args.keep and not problems:
            shutil.rmtree(self.work, ignore_errors=True)
        elif problems:
            print(f"kill-storm: the store and key are kept in {self.work}", file=sys.stderr)
        return 0 if not problems and checked > 0 else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cachetool", required=True)
    parser.add_argument("--writers", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--accounts-per-writer", type=int, default=8)
    parser.add_argument("--work", help="scratch directory (emptied first); default: a new temporary directory")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--keep", action="store_true", help="keep the store even when nothing failed")
    sys.exit(Storm(parser.parse_args()).run())


if __name__ == "__main__":
    main()
