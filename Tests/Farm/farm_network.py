"""Where the farm's processes live, and how a link is cut: four network namespaces on a bridge, or, without root
(or when `ip netns` fails), loopback with a proxy per host in front of PostgreSQL and the identity provider.

Both give the farm the same things: the address the server side (PostgreSQL, the identity provider) binds to; for
host i, how to start a process "on" it, the address its links to the server side come from (what the identity
provider's /inflight shows as the peer), the PostgreSQL and identity provider addresses it dials, and `cut(i)` /
`restore(i)`, which sever its links to the server side but not to its callers. Standard library only.
"""
import ctypes
import fcntl
import os
import re
import select
import socket
import subprocess
import threading
import time

CLONE_NEWNET = 0x40000000
# Every run's names start with this and its pid, so that concurrent runs never collide and a later run can remove
# what a run that was SIGKILLed left behind (its pid is gone).
PREFIX = "tcf"


def run_ip(*arguments, check=True, namespace=None):
    command = (["ip", "netns", "exec", namespace] if namespace else []) + ["ip", *arguments]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` failed: {result.stderr.strip()[:300]}")
    return result


class NamespaceNetwork:
    """A bridge in the root namespace at 10.77.K.1/24 (K: the first subnet no interface uses) and, per host, a
    namespace with loopback up and a veth pair: the root end on the bridge, the other end in the namespace at
    10.77.K.(2+i). Cutting host i sets the root end down: its packets to PostgreSQL and the identity provider go
    nowhere (connections hang, as on a real partition), while its loopback, where its callers reach it, stays up."""

    mode = "netns"

    def __init__(self, hosts: int):
        self.hosts = hosts
        self.tag = f"{PREFIX}{os.getpid()}"
        self.bridge = f"{self.tag}b"
        self.namespaces = [f"{self.tag}n{i}" for i in range(hosts)]
        self.root_ends = [f"{self.tag}v{i}" for i in range(hosts)]
        self.created_links, self.created_namespaces = [], []
        self.subnet = None

    @staticmethod
    def sweep_leftovers():
        """Removes the namespaces and links of earlier runs whose process is gone (a run that was SIGKILLed)."""
        def dead(name):
            match = re.match(rf"{PREFIX}(\d+)[bnv]\d*$", name)
            return match is not None and not os.path.exists(f"/proc/{match.group(1)}")
        for namespace in run_ip("netns", "list", check=False).stdout.split():
            if dead(namespace):
                run_ip("netns", "delete", namespace, check=False)
        for line in run_ip("-o", "link", "show", check=False).stdout.splitlines():
            parts = line.split(":")
            if len(parts) > 1:
                name = parts[1].strip().split("@")[0]
                if dead(name):
                    run_ip("link", "delete", name, check=False)

    def setup(self):
        self.sweep_leftovers()
        # Concurrent runs choose their subnet one at a time.
        with open("/run/token-cache-farm.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            used = set(re.findall(r"inet 10\.77\.(\d+)\.", run_ip("-o", "-4", "addr", "show").stdout))
            free = [k for k in range(256) if str(k) not in used]
            if not free:
                raise RuntimeError("no free 10.77.K.0/24 subnet")
            self.subnet = f"10.77.{free[0]}"
            # No forwarding delay: a port set up again forwards at once (the default learning delay would stretch a cut).
            run_ip("link", "add", self.bridge, "type", "bridge", "forward_delay", "0")
            self.created_links.append(self.bridge)
            run_ip("addr", "add", f"{self.server_address}/24", "dev", self.bridge)
            run_ip("link", "set", self.bridge, "up")
        for i in range(self.hosts):
            namespace, root_end, inner_end = self.namespaces[i], self.root_ends[i], f"{self.tag}p{i}"
            run_ip("netns", "add", namespace)
            self.created_namespaces.append(namespace)
            run_ip("link", "add", root_end, "type", "veth", "peer", "name", inner_end)
            self.created_links.append(root_end)
            run_ip("link", "set", inner_end, "netns", namespace)
            run_ip("link", "set", root_end, "master", self.bridge)
            run_ip("link", "set", root_end, "up")
            run_ip("link", "set", "lo", "up", namespace=namespace)
            run_ip("addr", "add", f"{self.host_address(i)}/24", "dev", inner_end, namespace=namespace)
            run_ip("link", "set", inner_end, "up", namespace=namespace)

    def teardown(self):
        for namespace in reversed(self.created_namespaces):  # takes its veth ends with it
            run_ip("netns", "delete", namespace, check=False)
        for link in reversed(self.created_links):
            run_ip("link", "delete", link, check=False)
        self.created_namespaces, self.created_links = [], []

    @property
    def server_address(self):
        return f"{self.subnet}.1"

    @property
    def clients_cidr(self):
        return f"{self.subnet}.0/24"

    def host_address(self, i):
        return f"{self.subnet}.{2 + i}"

    def host_of_peer(self, peer):
        return next((i for i in range(self.hosts) if self.host_address(i) == peer), None)

    def command(self, i, argv):
        return ["ip", "netns", "exec", self.namespaces[i], *argv]

    def postgresql_endpoint(self, i, port):
        return self.server_address, port

    def idp_endpoint(self, i, port):
        return self.server_address, port

    def start_proxies(self, postgresql_port, idp_port):
        pass

    def enter_host(self, i):
        """Moves the calling thread into host i's namespace (setns is per thread), so that its sockets reach the host
        on the namespace's loopback."""
        libc = ctypes.CDLL(None, use_errno=True)
        descriptor = os.open(f"/run/netns/{self.namespaces[i]}", os.O_RDONLY)
        try:
            if libc.setns(descriptor, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns into {self.namespaces[i]}")
        finally:
            os.close(descriptor)

    def cut(self, i):
        run_ip("link", "set", self.root_ends[i], "down")

    def restore(self, i):
        run_ip("link", "set", self.root_ends[i], "up")


class Proxy:
    """A TCP forwarder on loopback in front of one server, for one host: `cut()` makes it a black hole (new and
    open connections stay open, nothing goes through: what a host sees of a partition), `restore()` forwards again,
    what was held included (as TCP delivers what it retransmits once a partition heals). Its connections to the server come from `source` (a 127.x address of the host's own), so
    that the server sees which host a connection is for."""

    def __init__(self, target, source):
        self.target, self.source = target, source
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.cut_off = False
        self.generation = 0
        self.open = set()
        self.stopped = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.stopped:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.forward, args=(client,), daemon=True).start()

    def forward(self, client):
        with self.lock:
            generation = self.generation
            self.open.add(client)
        upstream = None
        try:
            while True:
                with self.lock:
                    cut, current = self.cut_off, self.generation
                if current != generation:
                    return
                if not cut:
                    break
                time.sleep(0.05)
            upstream = socket.create_connection(self.target, timeout=5, source_address=(self.source, 0))
            upstream.settimeout(None)
            with self.lock:
                self.open.add(upstream)
            pair = {client: upstream, upstream: client}
            while True:
                readable, _, _ = select.select(list(pair), [], [], 0.1)
                with self.lock:
                    cut, current = self.cut_off, self.generation
                if current != generation:
                    return
                if cut:
                    continue  # held: nothing read, nothing sent
                for end in readable:
                    data = end.recv(65536)
                    if not data:
                        return
                    pair[end].sendall(data)
        except OSError:
            return
        finally:
            with self.lock:
                for end in (client, upstream):
                    if end is not None:
                        self.open.discard(end)
                        try:
                            end.close()
                        except OSError:
                            pass

    def cut(self):
        with self.lock:
            self.cut_off = True

    def restore(self):
        with self.lock:
            self.cut_off = False

    def stop(self):
        self.stopped = True
        try:
            self.listener.close()
        except OSError:
            pass


class ProxyNetwork:
    """Everything on loopback; host i dials PostgreSQL and the identity provider through proxies of its own, whose
    connections come from 127.0.77.(2+i)."""

    mode = "loopback-proxy"
    server_address = "127.0.0.1"
    clients_cidr = "127.0.0.0/8"

    def __init__(self, hosts: int):
        self.hosts = hosts
        self.postgresql_proxies, self.idp_proxies = [], []

    def setup(self):
        pass

    def start_proxies(self, postgresql_port, idp_port):
        for i in range(self.hosts):
            self.postgresql_proxies.append(Proxy(("127.0.0.1", postgresql_port), self.host_address(i)))
            self.idp_proxies.append(Proxy(("127.0.0.1", idp_port), self.host_address(i)))

    def teardown(self):
        for proxy in self.postgresql_proxies + self.idp_proxies:
            proxy.stop()

    def host_address(self, i):
        return f"127.0.77.{2 + i}"

    def host_of_peer(self, peer):
        return next((i for i in range(self.hosts) if self.host_address(i) == peer), None)

    def command(self, i, argv):
        return list(argv)

    def postgresql_endpoint(self, i, port):
        return "127.0.0.1", self.postgresql_proxies[i].port

    def idp_endpoint(self, i, port):
        return "127.0.0.1", self.idp_proxies[i].port

    def enter_host(self, i):
        pass

    def cut(self, i):
        self.postgresql_proxies[i].cut()
        self.idp_proxies[i].cut()

    def restore(self, i):
        self.postgresql_proxies[i].restore()
        self.idp_proxies[i].restore()


def make_network(mode: str, hosts: int):
    """The network `mode` asks for ("netns", "proxy", or "auto": namespaces when root and `ip netns` works)."""
    if mode in ("auto", "netns"):
        reason = None
        if os.geteuid() != 0:
            reason = "not root"
        else:
            network = NamespaceNetwork(hosts)
            try:
                network.setup()
                return network, None
            except (RuntimeError, OSError, subprocess.SubprocessError) as error:
                network.teardown()
                reason = f"ip netns failed: {error}"
        if mode == "netns":
            raise RuntimeError(f"network namespaces unavailable ({reason})")
        network = ProxyNetwork(hosts)
        network.setup()
        return network, reason
    network = ProxyNetwork(hosts)
    network.setup()
    return network, "asked for"
