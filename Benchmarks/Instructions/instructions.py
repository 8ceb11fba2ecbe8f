#!/usr/bin/env python3
"""`make instructions`: instructions, allocations and reference-count operations per operation, counted by callgrind.

For each tree (the working tree, and with --base REV also REV checked out into a temporary git worktree):
  1. builds the driver package Benchmarks/Instructions/ in release mode against that tree (for REV, this script's own
     copy of the package is put into the worktree at the same place, so both trees run the same driver source);
  2. populates a store of the synthetic population natively (`InstructionsDriver populate`: a few large durable
     write transactions, outside valgrind);
  3. per round, copies that store (ingest changes it) and runs `InstructionsDriver measure` under
     `valgrind --tool=callgrind --instr-atstart=no`: store opening and query preparation run uninstrumented; per
     operation the driver warms up, then zeroes the counters, runs n1 operations and dumps, zeroes, runs n2 further
     operations and dumps (client requests; Sources/CCallgrindRequests).
Rounds alternate the trees (A, B, A, B, ...); the table shows each tree's median over the rounds.

What is counted, per dump file (parsed here directly, see parse_dump):
  * Ir: the dump's `summary:` line, every user-space instruction executed between the zeroing and the dump, in every
    thread and library (the kernel's work, fsync included, is not an instruction of the process: callgrind's
    --collect-systime is off by default).
  * allocations: calls into the C allocator's entry points (malloc, calloc, realloc, posix_memalign, aligned_alloc,
    memalign, valloc, pvalloc), from the `calls=` lines of the call graph. Swift objects arrive through
    swift_allocObject -> swift_slowAlloc -> malloc, C++ through operator new -> malloc: each counted once, at malloc.
  * refcount ops: calls into the Swift runtime's reference-counting entry points (swift_retain, swift_release, their
    _n, nonatomic, bridgeObject, unknownObject and unowned variants), likewise.
  An arc from a function of the same family is not counted (swift_bridgeObjectRetain calls swift_retain, realloc may
  call malloc): each count is a call from outside the family, one per operation the code asked for. Call counts come
  from the `calls=` lines, not from inclusive costs, so they are exact whatever callgrind's call-stack tracking makes
  of the frames that were live when instrumentation started.
Per operation: (dump n2 - dump n1) / (n2 - n1), so what the measured region costs once (the client requests, entering
the loop) cancels.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent  # Benchmarks/Instructions
PACKAGE_IN_TREE = Path("Benchmarks/Instructions")

OPERATIONS = [
    ("hit_one_token", "hit, one-token bucket"),
    ("hit_uniform", "hit, uniform draw"),
    ("miss", "miss (never signed in)"),
    ("hit_companions", "hit + companions read"),
    ("ingest", "ingest (refresh grant)"),
]

ALLOCATION_FUNCTIONS = {
    "malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
    "__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_memalign", "__posix_memalign",
}
REFCOUNT_FUNCTION = re.compile(
    r"^swift_(?:nonatomic_)?(?:retain|release|bridgeObjectRetain|bridgeObjectRelease|unknownObjectRetain|unknownObjectRelease"
    r"|unownedRetain|unownedRelease|unownedRetainStrong|unownedRetainStrongAndRelease|unknownObjectUnownedRetain"
    r"|unknownObjectUnownedRelease)(?:_n)?$"
)

VALGRIND_OPTIONS = [
    "--tool=callgrind",
    "--instr-atstart=no",  # nothing is simulated until the driver's CALLGRIND_START_INSTRUMENTATION
    "--compress-strings=no",  # plain names on every fn=/cfn= line: each dump file reads on its own
    "--compress-pos=no",
    "--separate-recs=1",  # no 'N suffixes for recursion levels (swift_release -> deinit -> swift_release)
]
# The measured processes get the same environment in both trees; deterministic hashing makes Set and Dictionary
# probe sequences (and so their instruction counts) the same in every run.
MEASURE_ENVIRONMENT = {"SWIFT_DETERMINISTIC_HASHING": "1", "LC_ALL": "C"}


def log(message: str) -> None:
    print(f"instructions: {message}", file=sys.stderr, flush=True)


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, check=True, **kwargs)


def output(command: list[str], **kwargs) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs).stdout.strip()


# MARK: Callgrind output


def function_name(field: str, names: dict[str, str]) -> str:
    """The name on a fn=/cfn= line, with or without string compression ("(12) name" defines, "(12)" refers)."""
    match = re.match(r"^\((\d+)\)(?: (.*))?$", field)
    if match:
        if match.group(2) is not None:
            names[match.group(1)] = match.group(2)
        field = names.get(match.group(1), field)
    return re.sub(r"'\d+$", "", field)  # a recursion level suffix, should --separate-recs be raised


def parse_dump(path: Path) -> dict:
    """Trigger, total Ir and the counted calls of one callgrind dump file."""
    trigger, total = None, None
    caller = callee = None
    names: dict[str, str] = {}
    allocations: dict[str, int] = {}
    refcounts: dict[str, int] = {}
    nested_refcounts = 0  # calls from one refcount entry point into another (JSON only)
    with open(path, encoding="utf-8", errors="replace") as file:
        for line in file:
            if line.startswith("fn="):
                caller = function_name(line[3:].rstrip("\n"), names)
            elif line.startswith("cfn="):
                callee = function_name(line[4:].rstrip("\n"), names)
            elif line.startswith("calls="):
                count = int(line[6:].split()[0])
                if callee in ALLOCATION_FUNCTIONS and caller not in ALLOCATION_FUNCTIONS:
                    allocations[callee] = allocations.get(callee, 0) + count
                elif REFCOUNT_FUNCTION.match(callee or ""):
                    if REFCOUNT_FUNCTION.match(caller or ""):
                        nested_refcounts += count
                    else:
                        refcounts[callee] = refcounts.get(callee, 0) + count
            elif line.startswith("desc: Trigger:"):
                trigger = line.split(":", 2)[2].strip()
            elif line.startswith("summary:") or (line.startswith("totals:") and total is None):
                total = int(line.split(":", 1)[1].split()[0])
            elif line.startswith("events:") and line.split()[1:2] != ["Ir"]:
                raise SystemExit(f"instructions: {path}: unexpected events line {line.strip()!r}")
    if total is None:
        raise SystemExit(f"instructions: {path}: no summary line (not a callgrind dump?)")
    return {"trigger": trigger, "ir": total, "allocations": allocations, "refcounts": refcounts, "nested_refcounts": nested_refcounts}


def per_operation(dumps: dict[str, dict], plans: dict) -> dict:
    """(dump n2 - dump n1) / (n2 - n1) per operation."""
    results = {}
    for op, plan in plans.items():
        first, second = dumps[f"{op} n1"], dumps[f"{op} n2"]
        span = plan["n2"] - plan["n1"]

        def difference(key: str) -> dict[str, float]:
            symbols = set(first[key]) | set(second[key])
            return {s: (second[key].get(s, 0) - first[key].get(s, 0)) / span for s in sorted(symbols)}

        allocations, refcounts = difference("allocations"), difference("refcounts")
        results[op] = {
            "ir": (second["ir"] - first["ir"]) / span,
            "allocations": sum(allocations.values()),
            "refcounts": sum(refcounts.values()),
            # Every call into a refcount entry point, those from another one included (what a plain sum of
            # callgrind's call counts of swift_retain, swift_bridgeObjectRetain, ... gives).
            "refcount_calls_including_nested": sum(refcounts.values()) + (second["nested_refcounts"] - first["nested_refcounts"]) / span,
            "allocations_by_function": allocations,
            "refcounts_by_function": refcounts,
            "n1": plan["n1"],
            "n2": plan["n2"],
        }
    return results


# MARK: Trees


class Tree:
    def __init__(self, label: str, root: Path, description: str, work: Path):
        self.label, self.root, self.description = label, root, description
        self.work = work / label
        self.driver: Path | None = None
        self.rounds: list[dict] = []
        self.store: Path | None = None  # the populated store this tree measures (copied for every run)
        self.key: Path | None = None
        self.store_writer = label  # the tree whose build wrote it
        self.format = "?"  # the store's format versions, read/write, as this build's measuring runs open it
        self.cipher = "?"  # the cipher the measured store seals with (TOKEN_CACHE_CIPHER chooses it at population)

    @property
    def package(self) -> Path:
        return self.root / PACKAGE_IN_TREE

    def build(self, cache: Path | None = None) -> None:
        """Builds the driver against this tree; with `cache` (a folder named by the tree's commit, the driver's source
        and the compiler), reuses the binary built there before, else keeps one there."""
        self.work.mkdir(parents=True, exist_ok=True)
        self.driver = self.work / "InstructionsDriver"
        if cache is not None and (cache / "InstructionsDriver").exists():
            shutil.copy2(cache / "InstructionsDriver", self.driver)
            log(f"reusing the driver built against {self.description} from {cache} (--no-cache rebuilds)")
            return
        log(f"building the driver against {self.description} (release)")
        started = time.monotonic()
        command = ["swift", "build", "-c", "release", "--package-path", str(self.package), "--product", "InstructionsDriver"]
        try:
            run(command, stdout=sys.stderr)
        except subprocess.CalledProcessError:
            # SwiftPM keeps its build plan across runs, and a plan that names source files the library has since moved
            # fails ("missing inputs") instead of being planned again: drop the plan (not the built products) once.
            log("the build failed; planning it again from the package's current files")
            for plan in [self.package / ".build" / "release.yaml", self.package / ".build" / "build.db"]:
                plan.unlink(missing_ok=True)
            run(command, stdout=sys.stderr)
        binary = Path(output(["swift", "build", "-c", "release", "--package-path", str(self.package), "--show-bin-path"])) / "InstructionsDriver"
        # The same code without its DWARF: valgrind 3.19 cannot read the DWARF 5 that Swift 6.3 writes (it gives up on
        # the whole process). The symbol table stays, so every function keeps its name; the code is untouched.
        run(["objcopy", "--strip-debug", str(binary), str(self.driver)])
        log(f"built in {time.monotonic() - started:.0f} s")
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.driver, cache / "InstructionsDriver.partial")
            os.replace(cache / "InstructionsDriver.partial", cache / "InstructionsDriver")

    def populate(self, tokens: int) -> None:
        self.store, self.key = self.work / "store", self.work / "key"
        shutil.rmtree(self.store, ignore_errors=True)
        self.key.unlink(missing_ok=True)
        started = time.monotonic()
        run([str(self.driver), "populate", "--store", str(self.store), "--key", str(self.key), "--tokens", str(tokens)],
            stdout=subprocess.DEVNULL)
        log(f"{self.label}: populated {tokens} access tokens in {time.monotonic() - started:.1f} s (natively)")

    def adopt_store(self, other: "Tree", tokens: int) -> bool:
        """Measures `other`'s store if this build reads it (a read-only open: an older format is not upgraded)."""
        process = subprocess.run([str(self.driver), "check", "--store", str(other.store), "--key", str(other.key),
                                  "--tokens", str(tokens)], capture_output=True, text=True)
        if process.returncode != 0:
            log(f"{self.label} cannot read the store {other.label} wrote ({process.stderr.strip()}): it writes its own")
            return False
        self.store, self.key, self.store_writer = other.store, other.key, other.label
        return True

    def measure(self, tokens: int, scale: float, ops: list[str], keep_dumps: bool) -> dict:
        """One measuring process under callgrind on a fresh copy of the populated store."""
        run_dir = self.work / "run"
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir(parents=True)
        shutil.copytree(self.store, run_dir / "store")
        dumps_prefix = run_dir / "callgrind.out"
        command = ["valgrind", *VALGRIND_OPTIONS, f"--callgrind-out-file={dumps_prefix}", str(self.driver), "measure",
                   "--store", str(run_dir / "store"), "--key", str(self.key), "--tokens", str(tokens),
                   "--scale", str(scale), "--ops", ",".join(ops)]
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/"), **MEASURE_ENVIRONMENT}
        started = time.monotonic()
        process = subprocess.run(command, capture_output=True, text=True, env=environment)
        if process.returncode != 0:
            sys.stderr.write(process.stderr[-4000:])
            raise SystemExit(f"instructions: the measuring run of {self.description} failed (exit {process.returncode})")
        report = json.loads(process.stdout.strip().splitlines()[-1])
        self.format = report["format"]
        self.cipher = report.get("cipher", "?")
        if not report.get("valgrind"):
            raise SystemExit("instructions: the driver did not see valgrind (client requests are no-ops): nothing was measured")
        dumps = {}
        for path in sorted(run_dir.glob("callgrind.out.*")):
            dump = parse_dump(path)
            name = (dump["trigger"] or "").removeprefix("Client Request: ")
            if name in dumps:
                raise SystemExit(f"instructions: two dumps named {name!r}")
            dumps[name] = dump
        missing = [f"{op} n{k}" for op in report["ops"] for k in (1, 2) if f"{op} n{k}" not in dumps]
        if missing:
            raise SystemExit(f"instructions: dumps missing: {missing}")
        result = per_operation(dumps, report["ops"])
        if keep_dumps:  # the last round's dumps, for callgrind_annotate
            kept = self.work / "callgrind"
            shutil.rmtree(kept, ignore_errors=True)
            kept.mkdir()
            for path in run_dir.glob("callgrind.out*"):
                shutil.move(str(path), kept / path.name)
        shutil.rmtree(run_dir)
        log(f"{self.label}: measured in {time.monotonic() - started:.0f} s: "
            + ", ".join(f"{op} {r['ir']:,.0f} Ir" for op, r in result.items()))
        self.rounds.append(result)
        return result

    def medians(self) -> dict:
        medians = {}
        for op in self.rounds[0]:
            values = [r[op] for r in self.rounds]
            entry = {key: statistics.median(v[key] for v in values)
                     for key in ("ir", "allocations", "refcounts", "refcount_calls_including_nested")}
            entry["rounds"] = {key: [v[key] for v in values] for key in ("ir", "allocations", "refcounts")}
            # What varies between rounds of the same build: (max - min) / median of Ir, in percent.
            spread = max(entry["rounds"]["ir"]) - min(entry["rounds"]["ir"])
            entry["ir_spread_percent"] = 100 * spread / entry["ir"] if entry["ir"] else 0.0
            last = values[-1]
            entry["allocations_by_function"] = last["allocations_by_function"]
            entry["refcounts_by_function"] = last["refcounts_by_function"]
            entry["n1"], entry["n2"] = last["n1"], last["n2"]
            medians[op] = entry
        return medians


def git(repo: Path, *arguments: str) -> str:
    return output(["git", "-C", str(repo), *arguments])


def tree_description(repo: Path) -> str:
    head = git(repo, "rev-parse", "--short", "HEAD")
    dirty = git(repo, "status", "--porcelain", "--untracked-files=no")
    return f"working tree (HEAD {head}{', modified' if dirty else ''})"


def driver_fingerprint() -> str:
    """What a driver binary is built from besides the library: the package's sources and the compiler."""
    version = subprocess.run(["swift", "--version"], capture_output=True, text=True, check=True)
    digest = hashlib.sha256((version.stdout + version.stderr).encode())
    for path in sorted([HERE / "Package.swift", *(HERE / "Sources").rglob("*")]):
        if path.is_file():
            digest.update(str(path.relative_to(HERE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def remove_worktree(repo: Path, worktree: Path | None) -> None:
    if worktree is None:
        return
    subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(worktree)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(worktree, ignore_errors=True)
    subprocess.run(["git", "-C", str(repo), "worktree", "prune"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # SwiftPM's lock files for the build inside it, named after its path (/tmp/x/y.lock -> $TMPDIR/_tmp_x_y.lock).
    for lock in Path(tempfile.gettempdir()).glob(str(worktree).replace("/", "_") + "_*.lock"):
        lock.unlink(missing_ok=True)


def copy_driver_package(destination: Path) -> None:
    """This script's driver package, without build products, at the same place in another tree."""
    shutil.rmtree(destination, ignore_errors=True)
    shutil.copytree(HERE, destination, ignore=shutil.ignore_patterns(".build", ".swiftpm", "__pycache__"))


# MARK: Report


def cpu_model() -> str:
    try:
        for line in output(["lscpu"]).splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return "unknown"


def delta(current: float, base: float) -> str:
    if base == 0:
        return "—" if current == 0 else "new"
    return f"{100 * (current - base) / base:+.2f} %"


def table(trees: list[Tree], medians: list[dict], ops: list[str]) -> str:
    labels = dict(OPERATIONS)
    a = medians[0]
    if len(trees) == 1:
        header = ["operation", "Ir/op", "mallocs/op", "refcount ops/op", "Ir spread"]
        rows = [[labels[op], f"{a[op]['ir']:,.0f}", f"{a[op]['allocations']:.2f}", f"{a[op]['refcounts']:.1f}",
                 f"{a[op]['ir_spread_percent']:.3f} %"] for op in ops]
    else:
        b = medians[1]
        header = ["operation", "Ir/op A", "Ir/op B", "Δ Ir", "mallocs A", "mallocs B", "Δ mallocs",
                  "refcount A", "refcount B", "Δ refcount", "Ir spread A / B"]
        rows = [[labels[op], f"{a[op]['ir']:,.0f}", f"{b[op]['ir']:,.0f}", delta(a[op]["ir"], b[op]["ir"]),
                 f"{a[op]['allocations']:.2f}", f"{b[op]['allocations']:.2f}", delta(a[op]["allocations"], b[op]["allocations"]),
                 f"{a[op]['refcounts']:.1f}", f"{b[op]['refcounts']:.1f}", delta(a[op]["refcounts"], b[op]["refcounts"]),
                 f"{a[op]['ir_spread_percent']:.3f} / {b[op]['ir_spread_percent']:.3f} %"] for op in ops]
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)) for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# MARK: Main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=HERE.parent.parent, help="the repository root (the tree measured as A)")
    parser.add_argument("--base", help="a git revision to measure as B, the same driver built against it")
    parser.add_argument("--tokens", type=int, default=100_000, help="access tokens in the store (default 100000)")
    parser.add_argument("--rounds", type=int, default=2, help="measuring runs per tree, alternating A, B, A, B (default 2)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the number of measured operations")
    parser.add_argument("--ops", default=",".join(op for op, _ in OPERATIONS), help="a subset of the operations")
    parser.add_argument("--separate-stores", action="store_true",
                        help="each tree measures a store its own build wrote (by default B measures A's when it reads it)")
    parser.add_argument("--no-cache", action="store_true", help="build the driver against BASE even if one built before is kept")
    parser.add_argument("--work", type=Path, help="work directory (default <repo>/.build/instructions)")
    arguments = parser.parse_args()

    started = time.monotonic()
    repo = arguments.repo.resolve()
    work = (arguments.work or repo / ".build" / "instructions").resolve()
    ops = [op for op, _ in OPERATIONS if op in arguments.ops.split(",")]
    if arguments.rounds < 1 or arguments.tokens < 10:
        parser.error("--rounds must be at least 1 and --tokens at least 10")
    for tool in ("valgrind", "objcopy", "swift", "git"):
        if shutil.which(tool) is None:
            raise SystemExit(f"instructions: {tool} not found")
    shutil.rmtree(work / "A", ignore_errors=True)
    shutil.rmtree(work / "B", ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)

    trees = [Tree("A", repo, tree_description(repo), work)]
    base_worktree = None
    try:
        trees[0].build()
        if arguments.base:
            base_commit = git(repo, "rev-parse", "--verify", f"{arguments.base}^{{commit}}")
            # A base commit never changes: the driver built against it is kept, named by the commit, the driver's
            # sources and the compiler, and reused by the next run with the same three.
            cache = None if arguments.no_cache else work / "base-drivers" / f"{base_commit[:16]}-{driver_fingerprint()}"
            base = Tree("B", Path("/nonexistent"), f"{arguments.base} ({base_commit[:12]})", work)
            trees.append(base)
            if cache is None or not (cache / "InstructionsDriver").exists():
                base_worktree = Path(tempfile.mkdtemp(prefix="token-cache-instructions-base-"))
                log(f"checking out {arguments.base} ({base_commit[:12]}) into a temporary worktree {base_worktree}")
                run(["git", "-C", str(repo), "worktree", "add", "--detach", "--force", str(base_worktree), base_commit],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                copy_driver_package(base_worktree / PACKAGE_IN_TREE)
                base.root = base_worktree
            base.build(cache)
            remove_worktree(repo, base_worktree)  # the driver binary is all that is needed of it
            base_worktree = None
        # One population, written by A's build, measured by both: a store's layout depends on its random data key
        # (the blind-index keys order the records), and two populations differ slightly (under 0.1 % at 100k, up to
        # ~1 % for a miss at 2k), which would otherwise show as a Δ of identical code.
        trees[0].populate(arguments.tokens)
        for tree in trees[1:]:
            if arguments.separate_stores or not tree.adopt_store(trees[0], arguments.tokens):
                tree.populate(arguments.tokens)
        for round_number in range(arguments.rounds):
            for tree in trees:
                log(f"round {round_number + 1}/{arguments.rounds}: {tree.label} ({tree.description})")
                tree.measure(arguments.tokens, arguments.scale, ops, keep_dumps=round_number == arguments.rounds - 1)
    finally:
        remove_worktree(repo, base_worktree)
        for tree in trees:  # the stores are large; the driver binary and the last dumps stay
            shutil.rmtree(tree.work / "store", ignore_errors=True)
            shutil.rmtree(tree.work / "run", ignore_errors=True)

    medians = [tree.medians() for tree in trees]
    valgrind = output(["valgrind", "--version"])
    elapsed = time.monotonic() - started
    header = [
        f"Instructions per operation (callgrind), {arguments.tokens:,} access tokens, "
        f"median of {arguments.rounds} round{'s' if arguments.rounds > 1 else ''} per tree, alternating",
        f"CPU: {cpu_model()}; {valgrind}",
        f"A: {trees[0].description}; records sealed with {trees[0].cipher}",
    ]
    if len(trees) > 1:
        header.append(f"B: {trees[1].description}; records sealed with {trees[1].cipher}; Δ = (A − B) / B")
        if trees[1].store_writer == "A":
            header.append(f"Store: one population written by A's build, a fresh copy for every run "
                          f"(format {trees[0].format} as A opens it, {trees[1].format} as B does)")
        else:
            header.append("Store: each tree measures a population its own build wrote (two random data keys, two layouts: "
                          "under 0.1 % at 100k, ~1 % for a miss at 2k, is the layouts', not the code's)")
    print("\n".join(header))
    print()
    print(table(trees, medians, ops))
    print()
    print("Ir: user-space instructions (fsync and other kernel work not counted); mallocs: calls to malloc, calloc, "
          "realloc, posix_memalign, aligned_alloc, memalign; refcount: calls to swift_retain/release and variants. "
          "Ir spread: (max − min) / median over the rounds.")
    print(f"Total time {elapsed / 60:.1f} min. JSON: {work / 'results.json'}; callgrind dumps of the last round: "
          + ", ".join(str(tree.work / "callgrind") for tree in trees))

    document = {
        "tokens": arguments.tokens,
        "rounds": arguments.rounds,
        "scale": arguments.scale,
        "cpu": cpu_model(),
        "valgrind": valgrind,
        "seconds": round(elapsed, 1),
        "trees": {tree.label: {"description": tree.description, "store_written_by": tree.store_writer, "format": tree.format,
                               "cipher": tree.cipher,
                               "operations": m} for tree, m in zip(trees, medians)},
    }
    if len(trees) > 1:
        document["delta_percent"] = {
            op: {key: (100 * (medians[0][op][key] - medians[1][op][key]) / medians[1][op][key] if medians[1][op][key] else None)
                 for key in ("ir", "allocations", "refcounts")}
            for op in ops
        }
    (work / "results.json").write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
