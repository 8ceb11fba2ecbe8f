#!/usr/bin/env python3
"""Drives a farm of token-cache-web hosts that share one store, and checks what they answered.

    drive_farm.py --idp URL --host NAME=URL [--host NAME=URL ...] [--users 24] [--workers 12] [--duration 20]
                  [--sign-out-bound 1.0]

1. Signs users 0..U-1 in through the first host.
2. For DURATION seconds, WORKERS threads ask for tokens of every user, round-robin over users and hosts. Tokens
   live EXPIRES_IN seconds at the identity provider; with 305 a token needs refreshing after 5 s (the cache wants
   300 s left), so every user's refresh token is redeemed several times, with requests on all hosts racing for it.
3. Halfway, signs user 0 out through the first host, after each other host served that user from its L1; from the
   sign-out's acknowledgement on, polls every other host until it stops serving the user, and counts every 200 for
   that user to a request that started more than SIGN_OUT_BOUND seconds after the acknowledgement as a stale answer.
4. Prints a table per host (its own counts from GET /stats, the stale answers and unexpected errors seen here) and
   the identity provider's totals, and exits 1 if the identity provider saw a refresh token redeemed twice (reuse), a
   host gave a stale answer, a host served a token the identity provider did not issue to that user, a host did not
   stop serving the signed-out user within the bound, or anything else failed.

Only counts and timings are printed: no token, fingerprint or username. Standard library only; every request is
bounded by a timeout.
"""
import argparse
import http.client
import itertools
import json
import sys
import threading
import time
import urllib.parse

REQUEST_TIMEOUT = 15.0  # above the hosts' own bound on a token-endpoint call (10 s)


class Host:
    """One host: its name, address and a connection per thread (keep-alive)."""

    def __init__(self, name, url):
        self.name = name
        parsed = urllib.parse.urlsplit(url)
        self.address = (parsed.hostname, parsed.port)
        self.local = threading.local()

    def call(self, method, path):
        """(status, body as JSON or None); status 0 when the host did not answer."""
        for attempt in range(2):
            connection = getattr(self.local, "connection", None)
            if connection is None:
                connection = http.client.HTTPConnection(*self.address, timeout=REQUEST_TIMEOUT)
                self.local.connection = connection
            try:
                connection.request(method, path, headers={"Content-Length": "0"} if method == "POST" else {})
                response = connection.getresponse()
                data = response.read()
                try:
                    return response.status, json.loads(data)
                except ValueError:
                    return response.status, None
            except (OSError, http.client.HTTPException):
                connection.close()
                self.local.connection = None
                if attempt == 1:
                    return 0, None
                # A kept-alive connection the server closed meanwhile: one retry on a new one.
        return 0, None


def get_json(url, timeout=REQUEST_TIMEOUT):
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=timeout)
    try:
        connection.request("GET", parsed.path + ("?" + parsed.query if parsed.query else ""))
        return json.loads(connection.getresponse().read())
    finally:
        connection.close()


class Run:
    """What the workers saw, per host."""

    def __init__(self, hosts):
        self.lock = threading.Lock()
        self.hosts = hosts
        self.requests = {host.name: 0 for host in hosts}
        self.stale = {host.name: 0 for host in hosts}
        self.errors = {host.name: {} for host in hosts}
        self.served = []  # (user, fingerprint) of every 200, checked against the identity provider at the end
        self.signed_out_user = None
        self.signed_out_at = None  # monotonic time of the sign-out's acknowledgement
        self.bound = None
        self.latencies = {}  # source -> seconds each 200 took, as the driver saw it
        self.grace_answers = 0  # 200s for the signed-out user to requests started within the bound

    def error(self, host, kind):
        with self.lock:
            self.errors[host.name][kind] = self.errors[host.name].get(kind, 0) + 1

    def record(self, host, user, started, status, body):
        with self.lock:
            self.requests[host.name] += 1
            signed_out = user == self.signed_out_user and self.signed_out_at is not None
            if status == 200 and isinstance(body, dict) and "fingerprint" in body:
                self.served.append((user, body["fingerprint"]))
                self.latencies.setdefault(body.get("source"), []).append(time.monotonic() - started)
                if signed_out and started > self.signed_out_at + self.bound:
                    self.stale[host.name] += 1
                elif signed_out and started > self.signed_out_at:
                    self.grace_answers += 1
                return
        # A 401 for the signed-out user (once its sign-out began) is what the farm must answer.
        if status == 401 and user == self.signed_out_user:
            return
        kind = body.get("error", f"http_{status}") if isinstance(body, dict) else ("no_answer" if status == 0 else f"http_{status}")
        self.error(host, kind)


def token(host, user):
    return host.call("GET", f"/token?user={user}")


def worker(run, turns, users, deadline):
    """Asks for tokens until the deadline. The workers share one sequence of turns: turn n asks for user n mod USERS
    from a host that changes every round of the users, so while one request of a user waits for a refresh, the
    next ones for that user go to every host."""
    hosts = run.hosts
    while time.monotonic() < deadline:
        turn = next(turns)
        user = turn % users
        host = hosts[(turn + turn // users) % len(hosts)]
        started = time.monotonic()
        status, body = token(host, user)
        run.record(host, user, started, status, body)


def sign_out_and_watch(run, user, deadline_at):
    """Signs `user` out through the first host once the others serve it from their L1; returns (failures, notes)."""
    first, others = run.hosts[0], run.hosts[1:]
    failures, notes = [], []
    warm = []
    for host in others:
        sources = [token(host, user)[1] or {} for _ in range(3)]
        warm.append(any(isinstance(s, dict) and s.get("source") == "l1" for s in sources))
    notes.append(f"before the sign-out, {sum(warm)} of {len(others)} other hosts served user {user} from their L1")
    with run.lock:
        run.signed_out_user = user  # from here on, a 401 for this user is expected
    status, body = first.call("POST", f"/sign-out?user={user}")
    acknowledged = time.monotonic()
    if status != 200:
        failures.append(f"the sign-out through {first.name} answered HTTP {status}")
        return failures, notes
    with run.lock:
        run.signed_out_at = acknowledged
    for host in others:
        # Until it answers 401: every request here started after the acknowledgement.
        while True:
            started = time.monotonic()
            status, answer = token(host, user)
            run.record(host, user, started, status, answer)
            if status == 401:
                notes.append(f"{host.name} stopped serving user {user} {1000 * (time.monotonic() - acknowledged):.0f} ms after the sign-out was acknowledged")
                break
            if status == 0 or started > acknowledged + max(run.bound * 3, 5) or time.monotonic() > deadline_at:
                failures.append(f"{host.name} still answered HTTP {status} for user {user} {time.monotonic() - acknowledged:.1f} s after the sign-out")
                break
            time.sleep(0.01)
    return failures, notes


def cpu_model():
    """The CPU's model name and count, printed beside a rate (as lscpu shows them)."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            names = [line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")]
        return f"{len(names)} x {names[0]}" if names else "an unknown CPU"
    except OSError:
        return "an unknown CPU"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--idp", required=True)
    parser.add_argument("--host", action="append", required=True, help="NAME=URL")
    parser.add_argument("--users", type=int, default=24)
    parser.add_argument("--workers", type=int, default=12)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--sign-out-bound", type=float, default=1.0)
    options = parser.parse_args()
    hosts = [Host(*spec.split("=", 1)) for spec in options.host]
    run = Run(hosts)
    run.bound = options.sign_out_bound
    failures = []

    # 1. Sign-ins, all through the first host.
    signed_in = 0
    for user in range(options.users):
        status, _ = hosts[0].call("POST", f"/sign-in?user={user}")
        if status == 200:
            signed_in += 1
        else:
            failures.append(f"the sign-in of user {user} through {hosts[0].name} answered HTTP {status}")
    print(f"signed in {signed_in} users through {hosts[0].name}; {options.workers} workers ask {len(hosts)} hosts for tokens for {options.duration:.0f} s")

    # 2. and 3. The load, with the sign-out halfway.
    started = time.monotonic()
    deadline = started + options.duration
    # User 0 is signed out; the workers keep asking for it.
    turns = itertools.count()  # next() on it is atomic under the GIL
    threads = [threading.Thread(target=worker, args=(run, turns, options.users, deadline), daemon=True) for _ in range(options.workers)]
    for thread in threads:
        thread.start()
    time.sleep(options.duration / 2)
    sign_out_failures, notes = sign_out_and_watch(run, 0, deadline + 10)
    failures += sign_out_failures
    for thread in threads:
        thread.join(timeout=max(1.0, deadline - time.monotonic()) + REQUEST_TIMEOUT + 5)
        if thread.is_alive():
            failures.append("a worker's request did not end in time")
    elapsed = time.monotonic() - started

    # 4. What each host counted, what the identity provider counted, and the checks.
    print()
    for note in notes:
        print(note)
    if run.grace_answers:
        print(f"{run.grace_answers} answers for the signed-out user to requests started within {run.bound:g} s of the sign-out (allowed)")
    print()
    header = ["host", "requests", "l1", "store", "refreshed", "joined", "redemptions", "stale", "errors"]
    rows = []
    for host in hosts:
        status, stats = host.call("GET", "/stats")
        if status != 200 or not isinstance(stats, dict):
            failures.append(f"{host.name} did not answer GET /stats")
            stats = {}
        unexpected = sum(run.errors[host.name].values())
        rows.append([host.name, stats.get("requests", "?"), stats.get("l1", "?"), stats.get("store", "?"), stats.get("refreshed", "?"),
                     stats.get("joined", "?"), stats.get("redemptions", "?"), run.stale[host.name], unexpected])
        for kind, count in sorted(run.errors[host.name].items()):
            failures.append(f"{host.name}: {count} unexpected answers: {kind}")
        if run.stale[host.name]:
            failures.append(f"{host.name}: {run.stale[host.name]} stale answers for the signed-out user")
    widths = [max(len(str(row[column])) for row in [header] + rows) for column in range(len(header))]
    for row in [header] + rows:
        print("  ".join(str(cell).rjust(width) if column else str(cell).ljust(width) for column, (cell, width) in enumerate(zip(row, widths))))
    answered = sum(run.requests.values())
    print()
    for source in ("l1", "store", "refreshed", "joined"):
        times = sorted(run.latencies.get(source, []))
        if times:
            print(f"{source:>9}: {len(times):5d} answers, median {1000 * times[len(times) // 2]:6.1f} ms, "
                  f"99th percentile {1000 * times[min(len(times) - 1, int(len(times) * 0.99))]:6.1f} ms, slowest {1000 * times[-1]:6.1f} ms")
    print(f"\n{answered} token requests in {elapsed:.1f} s ({answered / elapsed:.0f}/s over the farm, on {cpu_model()}; a debug build"
          f" sharing the machine with its store, provider and driver: not a benchmark)")

    idp = get_json(options.idp + "/stats")
    print(f"identity provider: {idp['sign_ins']} sign-ins, {idp['redemptions']} redemptions, {idp['refused']} refused, {idp['reuse']} reuse")
    if idp["reuse"]:
        failures.append(f"the identity provider saw {idp['reuse']} refresh tokens redeemed twice")
    if idp["refused"]:
        failures.append(f"the identity provider refused {idp['refused']} redemptions")
    redeemed_by_hosts = sum(row[6] for row in rows if isinstance(row[6], int))
    if redeemed_by_hosts != idp["redemptions"]:
        failures.append(f"the hosts counted {redeemed_by_hosts} redemptions, the identity provider {idp['redemptions']}")

    # Every token served was issued to the user it was served for.
    issued = {user: set(get_json(f"{options.idp}/issued?user={user}")) for user in range(options.users)}
    foreign = sum(1 for user, fingerprint in run.served if fingerprint not in issued[user])
    if foreign:
        failures.append(f"{foreign} answers carried a token the identity provider did not issue to that user")

    if failures:
        print()
        for failure in failures:
            print("FAILED: " + failure)
        return 1
    print(f"no reuse, no stale answer (bound {run.bound:g} s), every token served was the user's own, no unexpected error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
