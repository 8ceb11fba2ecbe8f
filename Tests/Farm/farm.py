#!/usr/bin/env python3
"""Farm test: four `token-cache-web` hosts share one store on PostgreSQL while the server is stopped, a host is cut
off and a refresh-lease holder is SIGKILLed; hard gates on what callers saw.

Set-up: one private PostgreSQL (Scripts/with-postgresql, listening on the bridge address) and one fake identity
provider (Examples/FakeIdentityProvider/fake_idp.py) on the server side; four hosts, each in a network namespace of its
own (veth pair to a bridge), each with `--store postgresql://...` over TCP and the same key file; callers in each
namespace call their host on the namespace's loopback, so that cutting a host's link cuts it from PostgreSQL and the
identity provider, not from its callers. Without root, or when `ip netns` fails, everything runs on loopback and each
host reaches the server side through proxies of its own that can be cut (the summary says which mode ran).

Load: USERS users signed in up front through different hosts; tokens live EXPIRES_IN s (a few seconds above the
cache's 300 s margin, so every user's refresh token rotates every few seconds), redemptions take REDEEM_DELAY s;
callers ask for random users, now and then for signed-out ones; a user is signed out every few seconds through one
host and signed in again later through another.

Chaos, in turn: (1) PostgreSQL stopped with `pg_ctl stop -m immediate`, down OUTAGE s, restarted; (2) one host's link
set down for CUT s (and a user signed out through another host meanwhile); (3) a host found redeeming (the identity
provider's /inflight, peer address -> host) is SIGKILLed and restarted with the same name and store.

Gates (exit status 1 naming each failed one with its numbers; the summary table is printed either way):
- acknowledged writes kept: every acknowledged sign-in not signed out is answered 200 by every host at the end;
- one redemption per rotation: the identity provider saw no refusal but reuse, and a reuse only where the chaos makes
  one unavoidable, by name: a redemption under way (seen in /inflight) when its host was SIGKILLed (the response
  dies with the process) or cut off (the response dies on the link, or the lease lapses while the host holds the
  rotation and another host redeems the old token; the cut is longer than the lease), at most one reuse per such
  redemption, after which the user must sign in again. A server stop costs no reuse: a host whose store of a
  redeemed response fails keeps the response and stores it once the server is back, and does not redeem the old
  token meanwhile (the client's late store). --strict-reuse fails on any reuse at all. Every token the provider
  issued was served by some host, unless the user was exposed so or signed out;
- no stale answer: after a sign-out is acknowledged, no host answers the user with a 200 for a request begun more
  than STALE_BOUND s later (unless the user signed in again before that request was answered); a host cut off then (which cannot hear of it, and serves its L1 meanwhile: the
  documented price) gets STALE_BOUND s after its change listener can be back: link up + RECONNECT s (deadline + 2 s);
- hosts converged: every host answers from the store again (a 200 not from its L1) within CONVERGE s of PostgreSQL
  being back (of its link being back, for the cut-off host);
- outage answers: of the requests begun in the outage and the cut-off (up to SLACK s before their end), a host that
  answered a user from its L1 keeps answering that user 200 while the token is usable (its L1 entries stay valid:
  the host cannot hear of changes), and every other answer is a typed error (503 store_unavailable, 502
  idp_unavailable) within DEADLINE + SLACK s of the host's own time (its `ms`; the caller's time is reported beside);
- no hangs: no request anywhere runs into the caller's HTTP timeout (HANG s: above two lease waits);
- lease holder killed: the killed holder's user's token is redeemed again (by any host) within the lease + DEADLINE +
  SLACK s of the killed redemption, and no request for that user waits more than two leases + that (a takeover whose
  redemption is refused waits up to another lease for the holder's rotation, as the client does);
- calm answers: outside the windows (and CONVERGE s after them), a signed-in user's request is answered 200 or, at
  most for 1 % of them (an overloaded machine), with a typed error.

Findings go to a run directory (printed): requests.jsonl (one line per request: host, user number, times, status,
source, fingerprint; never a token), events.jsonl, summary.json, summary.md, and the logs of every process.

Usage: farm.py --host-binary PATH [--seconds 110] [--mode auto|netns|proxy] [--run-dir DIR] [...] (see --help).
Root is needed for namespaces. Standard library only.
"""
import argparse
import dataclasses
import http.client
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import farm_gates  # noqa: E402
import farm_network  # noqa: E402

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
WITH_POSTGRESQL = os.path.join(REPOSITORY, "Scripts", "with-postgresql")
FAKE_IDP = os.path.join(REPOSITORY, "Examples", "FakeIdentityProvider", "fake_idp.py")


class Interrupted(Exception):
    """SIGTERM or SIGHUP: end the run, cleaning up as for Ctrl-C."""


def hold_postgresql(environment_file):
    """Runs under Scripts/with-postgresql: hands the cluster's environment to the farm, then keeps the cluster up
    until standard input closes (the farm ended, however it ended)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the farm decides when the cluster goes
    names = [name for name in os.environ if name.startswith("TOKEN_CACHE_TEST_POSTGRESQL")]
    temporary = environment_file + ".tmp"
    with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
        json.dump({name: os.environ[name] for name in names}, out)
    os.rename(temporary, environment_file)
    while sys.stdin.buffer.read(65536):
        pass
    return 0


def read_line(stream, timeout):
    """The first line of `stream` within `timeout` s, or None."""
    deadline = time.monotonic() + timeout
    data = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(stream.fileno(), 1)
        if not chunk:
            break
        if chunk == b"\n":
            return data.decode(errors="replace")
        data += chunk
    return None


def copy_rest(stream, path):
    """Copies what a process still writes to `stream` into `path`, in the background."""
    def run():
        with open(path, "ab") as out:
            for chunk in iter(lambda: os.read(stream.fileno(), 65536), b""):
                out.write(chunk)
                out.flush()
    threading.Thread(target=run, daemon=True).start()


def on_thread(function, timeout):
    """Runs `function` on a thread of its own (which may enter a namespace) and returns its result, bounded."""
    box = {}

    def run():
        try:
            box["value"] = function()
        except BaseException as error:  # noqa: BLE001 - passed on to the caller
            box["error"] = error
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError(f"gave no result within {timeout} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def cpu_model():
    """lscpu's model name, beside the timings."""
    try:
        with open("/proc/cpuinfo") as source:
            for line in source:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


class Host:
    def __init__(self, index):
        self.index = index
        self.name = f"host{index}"
        self.process = None
        self.port = None
        self.up = False
        self.starts = 0


class Farm:
    def __init__(self, args, network, fallback_reason, run_dir):
        self.args, self.network, self.fallback_reason, self.run_dir = args, network, fallback_reason, run_dir
        self.rng = random.Random(args.seed)
        self.lock = threading.Lock()
        self.records = []   # one dict per request
        self.events = []    # what the driver did, when
        self.hosts = [Host(i) for i in range(args.hosts)]
        self.postgresql_holder = None
        self.postgresql = {}
        self.idp = None
        self.idp_port = None
        self.stopping = threading.Event()
        # User number -> "in" | "out" | "moving" (a sign-in or sign-out under way) | "ambiguous" (one that failed:
        # it may or may not have committed, so no gate judges the user afterwards).
        self.user_state = {}
        self.windows = []   # {"kind", "hosts", "start", "end"}: when hosts could not reach the server side
        self.cut_host = None
        self.threads = []
        self.redemptions = []  # redemptions seen in progress at the identity provider
        self.out_since = {}    # user -> when the churn may sign them in again, less 10 s
        self.protected = set()  # users the churn leaves alone (the killed lease holder's: its takeover is measured)

    # Bookkeeping

    def event(self, kind, **fields):
        entry = {"t": time.time(), "event": kind, **fields}
        with self.lock:
            self.events.append(entry)
        shown = " ".join(f"{key}={value}" for key, value in fields.items())
        print(f"farm: {time.strftime('%H:%M:%S')} {kind} {shown}".rstrip(), flush=True)

    def path(self, name):
        return os.path.join(self.run_dir, name)

    # The server side

    def start_postgresql(self):
        environment_file = self.path("postgresql.env.json")
        env = dict(os.environ, WITH_POSTGRESQL_LISTEN=self.network.server_address,
                   WITH_POSTGRESQL_CLIENTS=self.network.clients_cidr)
        log = open(self.path("with-postgresql.log"), "ab")
        self.postgresql_holder = subprocess.Popen(
            [WITH_POSTGRESQL, sys.executable, os.path.abspath(__file__), "--hold-postgresql", environment_file],
            stdin=subprocess.PIPE, stdout=log, stderr=log, env=env)
        # A first run may install PostgreSQL.
        deadline = time.monotonic() + self.args.postgresql_start_timeout
        while not os.path.exists(environment_file):
            if self.postgresql_holder.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not come up (see {self.path('with-postgresql.log')})")
            time.sleep(0.1)
        with open(environment_file) as source:
            self.postgresql = json.load(source)
        url = urllib.parse.urlsplit(self.postgresql["TOKEN_CACHE_TEST_POSTGRESQL_TCP"])
        self.postgresql_port = url.port
        # The hosts' password file: the cluster's password for any host and port (the proxies have ports of their own).
        self.postgresql_parameters = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
        cluster_passfile = self.postgresql_parameters["passfile"]
        with open(cluster_passfile) as source:
            fields = source.readline().rstrip("\n").split(":", 4)
        self.database, self.role = fields[2], fields[3]
        with open(os.open(self.path("passfile"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
            out.write(f"*:*:{fields[2]}:{fields[3]}:{fields[4]}\n")
        self.event("postgresql-up", address=self.network.server_address, port=self.postgresql_port)

    def as_server_user(self, argv):
        user = self.postgresql["TOKEN_CACHE_TEST_POSTGRESQL_USER"]
        if os.geteuid() == 0 and user != "root":
            return ["runuser", "-u", user, "--", *argv]
        return argv

    def pg_ctl(self, *arguments, timeout=60):
        bindir = self.postgresql["TOKEN_CACHE_TEST_POSTGRESQL_BIN"]
        data = self.postgresql["TOKEN_CACHE_TEST_POSTGRESQL_DATA"]
        command = self.as_server_user([os.path.join(bindir, "pg_ctl"), *arguments, "-D", data])
        # From a directory the server's user can read (pg_ctl changes to the data directory anyway).
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd="/")

    def stop_postgresql(self):
        if self.postgresql_holder is None:
            return
        try:  # the server's log, before the cluster goes
            shutil.copyfile(self.postgresql["TOKEN_CACHE_TEST_POSTGRESQL_LOG"], self.path("postgresql.log"))
        except (OSError, KeyError):
            pass
        try:
            self.postgresql_holder.stdin.close()
        except OSError:
            pass
        try:
            self.postgresql_holder.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.postgresql_holder.kill()
            self.postgresql_holder.wait(timeout=10)
        self.postgresql_holder = None

    def start_idp(self):
        env = dict(os.environ, BIND=self.network.server_address, PORT="0", EXPIRES_IN=str(self.args.expires_in),
                   REDEEM_DELAY=str(self.args.redeem_delay))
        self.idp = subprocess.Popen([sys.executable, self.args.idp_script], stdout=subprocess.PIPE,
                                    stderr=open(self.path("idp.log"), "ab"), env=env, start_new_session=True)
        line = read_line(self.idp.stdout, 30)
        if not line or not line.strip().isdigit():
            raise RuntimeError("the fake identity provider did not print its port within 30 s")
        self.idp_port = int(line)
        copy_rest(self.idp.stdout, self.path("idp.log"))
        self.event("idp-up", address=self.network.server_address, port=self.idp_port)

    def idp_get(self, path):
        connection = http.client.HTTPConnection(self.network.server_address, self.idp_port, timeout=10)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            return json.loads(response.read())
        finally:
            connection.close()

    # The hosts

    def store_url(self, i):
        address, port = self.network.postgresql_endpoint(i, self.postgresql_port)
        # The cluster's own parameters (TLS off loopback: sslmode, sslrootcert) with the hosts' password file.
        extra = "".join(f"&{k}={v}" for k, v in self.postgresql_parameters.items() if k != "passfile")
        return f"postgresql://{self.role}@{address}:{port}/{self.database}?passfile={self.path('passfile')}{extra}"

    def start_host(self, i):
        host = self.hosts[i]
        address, port = self.network.idp_endpoint(i, self.idp_port)
        argv = [self.args.host_binary, "--store", self.store_url(i), "--key-file", self.path("key"),
                "--idp", f"http://{address}:{port}", "--name", host.name, "--bind", "127.0.0.1", "--port", "0",
                "--store-timeout-ms", str(int((self.args.host_deadline or self.args.deadline) * 1000))]
        log_path = self.path(f"{host.name}.log")
        log = open(log_path, "ab")
        host.process = subprocess.Popen(self.network.command(i, argv), stdout=subprocess.PIPE, stderr=log,
                                        start_new_session=True)
        host.starts += 1
        return host

    def await_host(self, host, timeout=60):
        line = read_line(host.process.stdout, timeout)
        if not line or not line.startswith("listening on "):
            raise RuntimeError(f"{host.name} did not say `listening on <port>` within {timeout} s "
                               f"(see {self.path(host.name + '.log')})")
        copy_rest(host.process.stdout, self.path(f"{host.name}.log"))
        host.port = int(line.split()[-1])
        host.up = True
        self.event("host-up", host=host.name, start=host.starts)

    def kill_host(self, host):
        host.up = False
        try:
            host.process.send_signal(signal.SIGKILL)
        except ProcessLookupError:
            pass
        host.process.wait(timeout=30)

    def stop_hosts(self):
        for host in self.hosts:
            if host.process is not None and host.process.poll() is None:
                host.process.terminate()
        for host in self.hosts:
            if host.process is not None:
                try:
                    host.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    host.process.kill()
                    host.process.wait(timeout=10)

    # Requests (always from a thread inside the host's namespace)

    def call(self, i, method, path, user, op):
        """One request to host i, recorded; returns the record."""
        host = self.hosts[i]
        record = {"host": i, "user": user, "op": op, "start": time.time(), "status": None}
        port = host.port
        if not host.up or port is None:
            record.update(status="down", end=record["start"])
            return self.keep(record)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=self.args.hang)
        try:
            connection.request(method, path)
            response = connection.getresponse()
            body = response.read()
            record["status"] = response.status
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = {}
            if isinstance(parsed, dict):
                for key in ("source", "fingerprint", "expires_on", "error", "ms", "removed"):
                    if key in parsed:
                        record[key] = parsed[key]
        except TimeoutError:
            record["status"] = "hang"
        except ConnectionRefusedError:
            record["status"] = "down"
        except (OSError, http.client.HTTPException) as error:
            record["status"] = "neterror"
            record["error"] = type(error).__name__
        finally:
            connection.close()
        record["end"] = time.time()
        return self.keep(record)

    def keep(self, record):
        with self.lock:
            self.records.append(record)
        return record

    def on_host(self, i, function, timeout=None):
        def run():
            self.network.enter_host(i)
            return function()
        return on_thread(run, timeout or self.args.hang + 5)

    def sign_in(self, i, user):
        with self.lock:
            self.user_state[user] = "moving"
        record = self.on_host(i, lambda: self.call(i, "POST", f"/sign-in?user={user}", user, "sign-in"))
        with self.lock:
            self.user_state[user] = "in" if record["status"] == 200 else "ambiguous"
        return record

    def sign_out(self, i, user):
        with self.lock:
            self.user_state[user] = "moving"
        record = self.on_host(i, lambda: self.call(i, "POST", f"/sign-out?user={user}", user, "sign-out"))
        with self.lock:
            self.user_state[user] = "out" if record["status"] == 200 else "ambiguous"
        return record

    def caller(self, i, seed):
        self.network.enter_host(i)
        rng = random.Random(seed)
        while not self.stopping.is_set():
            with self.lock:
                signed_in = [u for u, state in self.user_state.items() if state == "in"]
                signed_out = [u for u, state in self.user_state.items() if state == "out"]
            pool = signed_out if signed_out and rng.random() < 0.15 else signed_in
            if pool:
                user = rng.choice(pool)
                self.call(i, "GET", f"/token?user={user}", user, "token")
            self.stopping.wait(rng.uniform(0.5, 1.5) * self.args.think)

    # Chaos

    def connected_hosts(self, exclude=()):
        return [h.index for h in self.hosts if h.up and h.index not in exclude and h.index != self.cut_host]

    def sign_out_churn(self):
        """Every few seconds, while the store is up: sign a user out through one host, and one signed out a while ago
        in again through another."""
        rng = random.Random(self.args.seed + 7)
        out_since = self.out_since
        while not self.stopping.wait(self.args.churn_every):
            if any(w["kind"] == "postgresql" and w["end"] is None for w in self.windows):
                continue
            hosts = self.connected_hosts()
            if len(hosts) < 2:
                continue
            with self.lock:
                signed_in = sorted(u for u, s in self.user_state.items() if s == "in" and u not in self.protected)
                back = sorted(u for u, s in self.user_state.items() if s == "out" and time.time() - out_since.get(u, 0) > 10)
            if back:
                user = rng.choice(back)
                record = self.sign_in(rng.choice(hosts), user)
                self.event("sign-in-again", user=user, host=record["host"], status=record["status"])
            if len(signed_in) > self.args.users // 2:
                user = rng.choice(signed_in)
                record = self.sign_out(rng.choice(hosts), user)
                out_since[user] = time.time()
                self.event("sign-out", user=user, host=record["host"], status=record["status"])

    def open_window(self, kind, hosts):
        window = {"kind": kind, "hosts": hosts, "start": time.time(), "end": None}
        with self.lock:
            self.windows.append(window)
        return window

    def postgresql_outage(self):
        window = self.open_window("postgresql", list(range(self.args.hosts)))
        result = self.pg_ctl("stop", "-m", "immediate", "-w", "-t", "30")
        self.event("postgresql-stopped", code=result.returncode)
        if result.returncode != 0:
            raise RuntimeError(f"pg_ctl stop failed: {result.stderr.strip()[:300]}")
        time.sleep(self.args.outage)
        result = self.pg_ctl("start", "-w", "-t", "60", "-l", self.postgresql["TOKEN_CACHE_TEST_POSTGRESQL_LOG"], timeout=90)
        window["end"] = time.time()
        self.event("postgresql-started", code=result.returncode, down_s=round(window["end"] - window["start"], 1))
        if result.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {result.stderr.strip()[:300]}")

    def recent_user(self, i, since):
        """A signed-in user host i answered since `since`, from its L1 if there is one (to sign out while i is cut
        off), else from anywhere; None if there is none."""
        with self.lock:
            answered = [r for r in self.records[-4000:] if r["host"] == i and r["status"] == 200 and r["start"] >= since
                        and self.user_state.get(r["user"]) == "in"]
        from_l1 = [r["user"] for r in answered if r.get("source") == "l1"]
        return from_l1[-1] if from_l1 else (answered[-1]["user"] if answered else None)

    def cut_off(self, i):
        self.cut_host = i
        window = self.open_window("cut", [i])
        self.network.cut(i)
        self.event("host-cut", host=self.hosts[i].name)
        # Meanwhile a user the cut-off host has in its L1 is signed out through another host: the cut-off host may
        # answer it until its link is back, and no longer than the stale bound after that.
        time.sleep(self.args.cut / 4)
        user = self.recent_user(i, window["start"] - 5)
        others = self.connected_hosts(exclude=(i,))
        if user is not None and others:
            record = self.sign_out(others[0], user)
            # Kept out until well after the link is back, so that what the cut-off host answers then can be judged.
            self.out_since[user] = window["start"] + self.args.cut + self.args.reconnect + self.args.stale_bound
            self.event("sign-out-during-cut", user=user, host=others[0], status=record["status"])
        time.sleep(max(0.0, window["start"] + self.args.cut - time.time()))
        self.network.restore(i)
        window["end"] = time.time()
        self.cut_host = None
        self.event("host-restored", host=self.hosts[i].name, cut_s=round(window["end"] - window["start"], 1))

    def kill_lease_holder(self):
        """Finds a redemption in progress, SIGKILLs the host doing it, restarts it; returns what the gate needs."""
        deadline = time.time() + self.args.kill_search
        while time.time() < deadline:
            try:
                inflight = self.idp_get("/inflight")
            except (OSError, ValueError, http.client.HTTPException):
                inflight = []
            for entry in inflight:
                i = self.network.host_of_peer(entry.get("peer"))
                if i is None or not self.hosts[i].up or entry.get("user") is None:
                    continue
                host = self.hosts[i]
                self.protected.add(entry["user"])
                self.kill_host(host)
                killed = {"host": i, "user": entry["user"], "t": time.time(), "inflight_since": entry.get("since")}
                self.event("lease-holder-killed", host=host.name, user=entry["user"])
                self.start_host(i)
                self.await_host(host)
                killed["restarted"] = time.time()
                return killed
            time.sleep(0.02)
        self.event("lease-holder-not-found", searched_s=self.args.kill_search)
        return None

    def watch_redemptions(self):
        """Polls the identity provider's /inflight: which host redeemed which user's token when (peer address -> host),
        so that a redemption the chaos orphaned can be told from one redeemed twice."""
        seen = {}
        while not self.stopping.wait(0.05):
            try:
                inflight = self.idp_get("/inflight")
            except (OSError, ValueError, http.client.HTTPException):
                continue
            for entry in inflight:
                key = (entry.get("peer"), entry.get("user"), entry.get("since"))
                if key not in seen:
                    seen[key] = {"host": self.network.host_of_peer(entry.get("peer")), "user": entry.get("user"),
                                 "since": entry.get("since")}
                    with self.lock:
                        self.redemptions.append(seen[key])

    # The run

    def run(self):
        started = time.time()
        self.machine = {"cpu": cpu_model(), "cores": os.cpu_count(), "load_at_start": os.getloadavg()}
        with open(os.open(self.path("key"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            out.write(os.urandom(32))
        self.start_postgresql()
        self.start_idp()
        self.network.start_proxies(self.postgresql_port, self.idp_port)
        # The first host creates the store; then the others open it.
        self.start_host(0)
        self.await_host(self.hosts[0])
        for host in self.hosts[1:]:
            self.start_host(host.index)
        for host in self.hosts[1:]:
            self.await_host(host)

        # Sign-ins, each user through host (user mod hosts), all hosts at once.
        def sign_in_share(i):
            for user in range(i, self.args.users, self.args.hosts):
                self.sign_in(i, user)
        share_threads = [threading.Thread(target=sign_in_share, args=(i,)) for i in range(self.args.hosts)]
        for thread in share_threads:
            thread.start()
        for thread in share_threads:
            thread.join(self.args.hang * self.args.users)
        signed = sum(1 for s in self.user_state.values() if s == "in")
        self.event("signed-in", users=signed, of=self.args.users)
        if signed != self.args.users:
            raise RuntimeError(f"only {signed} of {self.args.users} sign-ins were acknowledged before the chaos")

        load_started = time.time()
        for i in range(self.args.hosts):
            for c in range(self.args.callers):
                thread = threading.Thread(target=self.caller, args=(i, self.args.seed * 100 + i * 10 + c), daemon=True)
                thread.start()
                self.threads.append(thread)
        watcher = threading.Thread(target=self.watch_redemptions, daemon=True)
        watcher.start()
        self.threads.append(watcher)
        churn = threading.Thread(target=self.sign_out_churn, daemon=True)
        churn.start()
        self.threads.append(churn)

        def at(offset):
            time.sleep(max(0.0, load_started + offset - time.time()))

        at(self.args.warmup)
        self.postgresql_outage()
        at(self.args.warmup + self.args.outage + 15)
        self.cut_off(self.args.cut_host % self.args.hosts)
        at(self.args.warmup + self.args.outage + 15 + self.args.cut + 10)
        killed = self.kill_lease_holder()
        at(max(self.args.seconds, time.time() - load_started + self.args.lease + 5))
        self.stopping.set()
        for thread in self.threads:
            thread.join(self.args.hang + 5)
        self.event("load-stopped", seconds=round(time.time() - load_started, 1))

        self.machine["load_at_end"] = os.getloadavg()
        final = self.final_check()
        idp_stats = self.idp_get("/stats")
        issued = {user: self.idp_get(f"/issued?user={user}") for user in range(self.args.users)}
        host_stats = {}
        for host in self.hosts:
            record = self.on_host(host.index, lambda h=host: self.host_stats(h))
            host_stats[host.name] = record
        inputs = farm_gates.Inputs(
            args=vars(self.args), mode=self.network.mode, fallback_reason=self.fallback_reason,
            records=self.records, windows=self.windows, killed=killed, final=final, idp_stats=idp_stats,
            issued=issued, host_stats=host_stats, user_state=dict(self.user_state), started=started,
            load_started=load_started, redemptions=self.redemptions, run_dir=self.run_dir, machine=self.machine)
        # Everything the gates judge, so that `farm.py --evaluate RUN_DIR` can judge it again.
        with open(self.path("inputs.json"), "w") as out:
            json.dump(dataclasses.asdict(inputs), out)
        return farm_gates.evaluate(inputs)

    def host_stats(self, host):
        connection = http.client.HTTPConnection("127.0.0.1", host.port, timeout=10)
        try:
            connection.request("GET", "/stats")
            return json.loads(connection.getresponse().read())
        except (OSError, ValueError, http.client.HTTPException) as error:
            return {"error": type(error).__name__}
        finally:
            connection.close()

    def final_check(self):
        """Every host, every user: 200 for the signed in, 401 for the signed out."""
        results = {}

        def check(i):
            rows = []
            for user in range(self.args.users):
                rows.append(self.call(i, "GET", f"/token?user={user}", user, "final"))
            return rows
        threads_results = {}
        for i in range(self.args.hosts):
            threads_results[i] = self.on_host(i, lambda i=i: check(i), timeout=self.args.users * (self.args.hang + 1))
        for i, rows in threads_results.items():
            results[i] = rows
        return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hold-postgresql", help=argparse.SUPPRESS)
    parser.add_argument("--host-binary", help="the token-cache-web executable")
    parser.add_argument("--evaluate", metavar="RUN_DIR", help="judge a finished run's inputs.json again, run nothing")
    parser.add_argument("--idp-script", default=FAKE_IDP)
    parser.add_argument("--mode", choices=["auto", "netns", "proxy"], default="auto")
    parser.add_argument("--run-dir", help="where findings go (default: .build/farm/run-<time>-<pid>)")
    parser.add_argument("--seconds", type=float, default=110, help="load duration at least (chaos fits inside)")
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--users", type=int, default=40)
    parser.add_argument("--callers", type=int, default=3, help="caller threads per host")
    parser.add_argument("--think", type=float, default=0.05, help="mean pause between a caller's requests, s")
    parser.add_argument("--expires-in", type=int, default=312, help="the identity provider's token lifetime, s")
    parser.add_argument("--redeem-delay", type=float, default=0.5)
    parser.add_argument("--deadline", type=float, default=2.0, help="the hosts' store deadline, s")
    parser.add_argument("--host-deadline", type=float,
                        help="the deadline the hosts are given, when it should differ from the one judged (to see a gate fail)")
    parser.add_argument("--slack", type=float, default=1.5, help="beyond the deadline for a typed error, s")
    parser.add_argument("--hang", type=float, default=40.0,
                        help="caller's HTTP timeout, s: a request reaching it hangs (above two lease waits, a redemption and a deadline)")
    parser.add_argument("--stale-bound", type=float, default=2.0)
    parser.add_argument("--reconnect", type=float,
                        help="how long a host cut off may take to hear the store again once its link is back (default: "
                             "the deadline + 2 s, the change listener's longest pause between attempts)")
    parser.add_argument("--converge", type=float, default=5.0)
    parser.add_argument("--lease", type=float, default=15.0, help="the hosts' refresh lease duration, s")
    parser.add_argument("--strict-reuse", action="store_true",
                        help="fail on any reuse, even one after a kill or a cut of the redeeming host (by default only those pass)")
    parser.add_argument("--warmup", type=float, default=8.0)
    parser.add_argument("--outage", type=float, default=8.0)
    parser.add_argument("--cut", type=float, default=20.0)
    parser.add_argument("--cut-host", type=int, default=1)
    parser.add_argument("--kill-search", type=float, default=20.0)
    parser.add_argument("--churn-every", type=float, default=4.0)
    parser.add_argument("--postgresql-start-timeout", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    if args.hold_postgresql:
        return hold_postgresql(args.hold_postgresql)
    if args.evaluate:
        with open(os.path.join(args.evaluate, "inputs.json")) as source:
            saved = json.load(source)
        saved["final"] = {int(k): v for k, v in saved["final"].items()}
        saved["user_state"] = {int(k): v for k, v in saved["user_state"].items()}
        # The thresholds may be changed on the command line; the rest of the settings are the run's.
        for name in ("deadline", "slack", "stale_bound", "reconnect", "converge", "lease", "strict_reuse"):
            if getattr(args, name) != parser.get_default(name):
                saved["args"][name] = getattr(args, name)
        saved["run_dir"] = args.evaluate
        return farm_gates.evaluate(farm_gates.Inputs(**saved))
    if args.reconnect is None:
        args.reconnect = args.deadline + 2.0
    if not args.host_binary:
        parser.error("--host-binary is required")
    run_dir = args.run_dir or os.path.join(REPOSITORY, ".build", "farm", time.strftime("run-%Y%m%d-%H%M%S") + f"-{os.getpid()}")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir, mode=0o700)

    def interrupted(signum, _frame):
        raise Interrupted(signal.Signals(signum).name)
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)

    print(f"farm: run directory {run_dir}", flush=True)
    network, fallback_reason = farm_network.make_network(args.mode, args.hosts)
    print(f"farm: mode {network.mode}" + (f" (no namespaces: {fallback_reason})" if fallback_reason else ""), flush=True)
    farm = Farm(args, network, fallback_reason, run_dir)
    status = 2
    try:
        status = farm.run()
    except (KeyboardInterrupt, Interrupted) as error:
        print(f"farm: interrupted ({type(error).__name__} {error}); cleaning up", file=sys.stderr, flush=True)
        status = 130
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        print(f"farm: the run could not complete: {error}", file=sys.stderr, flush=True)
        status = 2
    finally:
        # A second Ctrl-C must not leave namespaces or a cluster behind.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        farm.stopping.set()
        farm.stop_hosts()
        if farm.idp is not None:
            farm.idp.kill()
            farm.idp.wait(timeout=10)
        farm.stop_postgresql()
        network.teardown()
        # The store's key and the server's password are no findings: they go with the run.
        for secret in ("key", "passfile"):
            try:
                os.remove(os.path.join(run_dir, secret))
            except FileNotFoundError:
                pass
        with open(os.path.join(run_dir, "requests.jsonl"), "w") as out:
            for record in farm.records:
                out.write(json.dumps(record) + "\n")
        with open(os.path.join(run_dir, "events.jsonl"), "w") as out:
            for entry in farm.events:
                out.write(json.dumps(entry) + "\n")
        print(f"farm: findings in {run_dir}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
