"""token-cache side by side with MSAL Python and msal-extensions, on the same tokens, on this machine.

Why this exists: a user picks a token cache after seeing it beat what they run today, on their own machine, in
one command (``make compare``). So this script runs every system on one seeded population (population.py), in one
run, and writes a table (Markdown), the raw figures (JSON) and a chart (PNG).

What is timed, and how (each figure is p50/p90/p99 over the samples taken; sample counts adapt to a time
budget per case, so a 100 ms scan at 100k tokens gets fewer samples than a 5 us key hit):

MSAL Python 1.39 ``SerializableTokenCache``, in memory, in this process (``time.perf_counter_ns`` around one call):
  - ``lookup, subset of scopes``: ``next(cache.search(AccessToken, target=[one scope], query={client_id,
    environment, realm, home_account_id}))``, what ``acquire_token_silent`` does: the exact key misses (the
    request names one of the stored 2-3 scopes) and the search scans every access token until a match;
  - ``lookup, exact scope set``: the same with the stored scope set: MSAL's O(1) key path;
  - ``add() of one token response``: ``cache.add(event)`` for a refresh-token grant replacing a stored token
    (access, refresh and ID token, account, app metadata).

msal-extensions 1.3 ``PersistedTokenCache(FilePersistence(path))``, plaintext JSON file on Linux:
  - ``open + first lookup``: a new ``PersistedTokenCache`` and one subset lookup: it reads and parses the whole file;
  - ``lookup``: the next lookups on that instance (a ``stat`` of the file, then the in-memory scan);
  - ``add() of one token response``: under its lock file, each of the five ``modify()`` calls re-serializes and
    rewrites the whole file (no fsync);
  - ``one process per lookup``: a new ``python`` process (msal_ext_lookup_once.py) that imports msal-extensions,
    opens the file and answers one lookup, timed from outside like ``cachetool lookup``.

token-cache (LMDB + libsodium, every record encrypted, durable commits):
  - ``cachetool bench --tokens N --json`` (in-process figures measured by the Swift engine itself: lookup hit,
    durable ingest, cold open + first lookup, store size) on its own population of N tokens of the same shape.
    Until ``cachetool bench`` exists these rows are missing and the run ends with exit code 3;
  - ``cachetool lookup --json`` and ``cachetool ingest`` spawned once per call (process start, store open,
    decryption, JSON output) on a store made by ``cachetool import`` of the very file MSAL reads.

Usage: ``python compare.py --cachetool PATH [--sizes 1000,10000,100000] [--tc-only-sizes 1000000] [--quick]
[--allow-missing-bench] [--self-test]``.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import msal

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import population as pop  # noqa: E402

REPO = HERE.parent.parent
BENCH_SECTIONS = ("lookup_hit", "lookup_miss", "lookup_refresh", "lookup_hit_companions", "ingest_durable",
                  "cold_open_first_lookup", "process_start", "floor_get_decrypt")
STAT_FIELDS = ("p50_ns", "p90_ns", "p99_ns", "samples")

#: (key, category, system, what). Categories share a token-cache reference for the ratio column.
ROWS = (
    ("msal_lookup_subset", "lookup", "MSAL Python", "`TokenCache.search`, subset of the stored scopes (scan), in memory"),
    ("msal_lookup_exact", "lookup", "MSAL Python", "`TokenCache.search`, exact stored scope set (O(1) key), in memory"),
    ("ext_lookup", "lookup", "msal-extensions", "`PersistedTokenCache.search`, subset, after the file is loaded"),
    ("tc_bench_lookup_hit", "lookup", "token-cache", "`silentLookup` hit, in process, encrypted store (`cachetool bench`)"),
    ("msal_add", "write", "MSAL Python", "`add()` of one token response, in memory"),
    ("ext_add", "write", "msal-extensions", "`add()` of one token response: 5 whole-file rewrites under a lock file, no fsync"),
    ("tc_bench_ingest_durable", "write", "token-cache", "`ingest` of one token response, one durable (fsync) commit (`cachetool bench`)"),
    ("ext_open_first_lookup", "open", "msal-extensions", "new `PersistedTokenCache` + first lookup (reads and parses the file)"),
    ("tc_bench_cold_open_first_lookup", "open", "token-cache", "open the store + first lookup, in process (`cachetool bench`)"),
    ("ext_process_lookup", "process", "msal-extensions", "one process per lookup: python start, import, load file, lookup"),
    ("tc_process_lookup", "process", "token-cache", "one process per lookup: `cachetool lookup --json` (spawn, open, decrypt, print)"),
    ("tc_process_ingest", "process-write", "token-cache", "one process per write: `cachetool ingest` of one token response (durable)"),
)
REFERENCE = {"lookup": "tc_bench_lookup_hit", "write": "tc_bench_ingest_durable",
             "open": "tc_bench_cold_open_first_lookup", "process": "tc_process_lookup",
             "process-write": "tc_process_ingest"}
#: When ``cachetool bench`` is missing, ratios fall back to the per-process cachetool figure (spawn included):
#: more than token-cache's in-process cost, so such a ratio understates token-cache's lead. Marked with a dagger.
FALLBACK_REFERENCE = {"lookup": "tc_process_lookup", "write": "tc_process_ingest", "open": "tc_process_lookup"}
CATEGORY_TITLES = {"lookup": "Silent lookup of one access token", "write": "Write one token response",
                   "open": "Open the cache + first lookup", "process": "One process per lookup (what a CLI pays)",
                   "process-write": "One process per write"}


class BenchUnavailable(Exception):
    """``cachetool bench`` is not in this build."""


# ----------------------------------------------------------------------------------------------------- timing


def stats(samples_ns: list[int]) -> dict:
    """p50/p90/p99 by nearest rank (no interpolation: every figure is a latency that was observed)."""
    ordered = sorted(samples_ns)
    def rank(p: float) -> int:
        return ordered[min(len(ordered) - 1, max(0, int(-(-p * len(ordered) // 100)) - 1))]
    return {"p50_ns": rank(50), "p90_ns": rank(90), "p99_ns": rank(99), "samples": len(ordered)}


class Budget:
    """How many samples a case gets: at least ``minimum``, then more until ``seconds`` or ``maximum``.

    Why: a fixed count is either unstable at 1k (too few) or unbounded at 100k (a 120 ms scan x 1,000). A time
    budget per case keeps the whole run bounded while cheap cases still get thousands of samples."""

    def __init__(self, minimum: int, maximum: int, seconds: float):
        self.minimum, self.maximum, self.seconds = minimum, maximum, seconds

    def run(self, sample: Callable[[int], int], warmup: int = 1) -> dict:
        for index in range(warmup):
            sample(-1 - index)
        taken: list[int] = []
        start = time.monotonic()
        while len(taken) < self.maximum and (len(taken) < self.minimum or time.monotonic() - start < self.seconds):
            taken.append(sample(len(taken)))
        return stats(taken)


def timed(call: Callable[[], object]) -> tuple[int, object]:
    start = time.perf_counter_ns()
    value = call()
    return time.perf_counter_ns() - start, value


# ----------------------------------------------------------------------------------------------- the systems


def measure_msal(population: pop.Population, text: str, budgets: dict) -> dict:
    """MSAL Python's in-memory ``SerializableTokenCache``: subset lookup (scan), exact lookup (O(1)), ``add()``."""
    cache = msal.SerializableTokenCache()
    deserialize_ns, _ = timed(lambda: cache.deserialize(text))
    queries = population.sample_queries(4096, 1)
    kind = msal.TokenCache.CredentialType.ACCESS_TOKEN

    def lookup(scopes_of: Callable[[pop.StoredToken], list[str]]) -> Callable[[int], int]:
        def sample(index: int) -> int:
            token = queries[index % len(queries)]
            target, query = scopes_of(token), token.query()
            elapsed, entry = timed(lambda: next(cache.search(kind, target=target, query=query, now=pop.NOW), None))
            if entry is None or entry["secret"] != token.secret:
                raise AssertionError(f"MSAL Python did not return the stored token for {token}")
            return elapsed
        return sample

    results = {
        "msal_lookup_subset": budgets["scan"].run(lookup(lambda t: [t.scopes[0]])),
        "msal_lookup_exact": budgets["fast"].run(lookup(lambda t: list(t.scopes))),
    }
    rng = random.Random(population.seed + 7)
    events = [population.token_response_event(token, rng) for token in population.sample_queries(256, 2)]
    results["msal_add"] = budgets["fast"].run(
        lambda index: timed(lambda: cache.add(events[index % len(events)], now=pop.NOW))[0])
    results["msal_deserialize"] = stats([deserialize_ns])
    return results


def measure_msal_extensions(population: pop.Population, source: Path, work: Path, budgets: dict) -> dict:
    """msal-extensions' ``PersistedTokenCache`` over ``FilePersistence`` (plaintext file, lock file beside it)."""
    from msal_extensions import FilePersistence, PersistedTokenCache

    folder = work / "msal-extensions"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    path = folder / "msal_token_cache.json"
    shutil.copyfile(source, path)
    queries = population.sample_queries(4096, 3)
    kind = "AccessToken"

    def search(cache, token: pop.StoredToken) -> None:
        entry = next(cache.search(kind, target=[token.scopes[0]], query=token.query(), now=pop.NOW), None)
        if entry is None or entry["secret"] != token.secret:
            raise AssertionError(f"msal-extensions did not return the stored token for {token}")

    def open_first(index: int) -> int:
        token = queries[index % len(queries)]
        def call():
            cache = PersistedTokenCache(FilePersistence(str(path)))
            search(cache, token)
        return timed(call)[0]

    results = {"ext_open_first_lookup": budgets["file"].run(open_first)}
    warm = PersistedTokenCache(FilePersistence(str(path)))
    search(warm, queries[0])
    results["ext_lookup"] = budgets["scan"].run(lambda i: timed(lambda: search(warm, queries[i % len(queries)]))[0])
    rng = random.Random(population.seed + 11)
    events = [population.token_response_event(token, rng) for token in population.sample_queries(64, 4)]
    results["ext_add"] = budgets["file_write"].run(
        lambda i: timed(lambda: warm.add(events[i % len(events)], now=pop.NOW))[0])
    # Restore the file (add() grew it by a refresh token per scope set) for the per-process lookups.
    shutil.copyfile(source, path)

    def process(index: int) -> int:
        token = queries[index % len(queries)]
        argv = [sys.executable, str(HERE / "msal_ext_lookup_once.py"), str(path), token.home_account_id,
                pop.ENVIRONMENT, token.client_id, token.realm, token.scopes[0], str(pop.NOW)]
        elapsed, done = timed(lambda: subprocess.run(argv, capture_output=True, text=True))
        if done.returncode != 0 or done.stdout.strip() != str(len(token.secret)):
            raise AssertionError(f"msal_ext_lookup_once.py failed: {done.returncode} {done.stderr[-500:]}")
        return elapsed

    results["ext_process_lookup"] = budgets["process_file"].run(process)
    return results


def cachetool_env(store: Path) -> dict:
    env = dict(os.environ)
    env.update({"TOKEN_CACHE_DIR": str(store / "store"), "TOKEN_CACHE_KEY_FILE": str(store / "key")})
    for name in ("TOKEN_CACHE_KEY", "TOKEN_CACHE_PASSPHRASE"):
        env.pop(name, None)
    return env


def allocated_bytes(folder: Path) -> int:
    """Bytes the files of ``folder`` occupy on disk (LMDB's data file is sparse: its length is the map size)."""
    return sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def measure_cachetool_processes(cachetool: str, population: pop.Population, source: Path, work: Path,
                                budgets: dict) -> dict:
    """token-cache through the CLI that exists today: ``import`` the same file, then one process per call."""
    folder = work / "token-cache"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    env = cachetool_env(folder)
    subprocess.run([cachetool, "init"], env=env, check=True, capture_output=True)
    start = time.monotonic()
    done = subprocess.run([cachetool, "import", str(source), "--json"], env=env, capture_output=True, text=True)
    import_seconds = time.monotonic() - start
    if done.returncode != 0:
        raise RuntimeError(f"cachetool import failed ({done.returncode}): {done.stderr[-800:]}")
    written = json.loads(done.stdout)["written"]
    if written.get("AccessToken") != population.tokens:
        raise RuntimeError(f"cachetool import wrote {written} access tokens, expected {population.tokens}")
    queries = population.sample_queries(4096, 5)

    def lookup(index: int) -> int:
        token = queries[index % len(queries)]
        argv = [cachetool, "lookup", "--client-id", token.client_id, "--account", token.home_account_id,
                "--environment", pop.ENVIRONMENT, "--realm", token.realm, "--scopes", token.scopes[0],
                "--now", str(pop.NOW), "--json"]
        elapsed, done = timed(lambda: subprocess.run(argv, env=env, capture_output=True, text=True))
        answer = json.loads(done.stdout) if done.returncode == 0 else {}
        if answer.get("outcome") != "hit" or answer["access_token"]["target"] != " ".join(token.scopes):
            raise AssertionError(f"cachetool lookup did not hit {token}: {done.returncode} {done.stderr[-500:]}")
        return elapsed

    results = {"tc_process_lookup": budgets["process"].run(lookup)}
    rng = random.Random(population.seed + 13)
    events = [population.token_response_event(token, rng) for token in population.sample_queries(256, 6)]

    def ingest(index: int) -> int:
        event = events[index % len(events)]
        argv = [cachetool, "ingest", "--client-id", event["client_id"], "--authority",
                event["token_endpoint"].rsplit("/oauth2/", 1)[0], "--scopes", " ".join(event["scope"]),
                "--grant-type", "refresh_token", "--now", str(pop.NOW), "-"]
        body = json.dumps(event["response"])
        elapsed, done = timed(lambda: subprocess.run(argv, env=env, input=body, capture_output=True, text=True))
        if done.returncode != 0:
            raise AssertionError(f"cachetool ingest failed ({done.returncode}): {done.stderr[-500:]}")
        return elapsed

    results["tc_process_ingest"] = budgets["process"].run(ingest)
    return {"results": results, "import_seconds": round(import_seconds, 3),
            "store_bytes_after_import": allocated_bytes(folder / "store")}


def bench_available(cachetool: str) -> bool:
    """``cachetool bench --help`` prints the bench usage only when the subcommand exists (otherwise the top-level
    help, with exit code 0 or 64): the usage line is the test."""
    done = subprocess.run([cachetool, "bench", "--help"], capture_output=True, text=True)
    return "USAGE: cachetool bench" in done.stdout + done.stderr


def validate_bench(report: dict, tokens: int) -> dict:
    """Checks the JSON contract of ``cachetool bench --json``; returns it, or raises ValueError naming the field."""
    for name in ("tokens", "cpu", "population", "store_bytes", "msal_json_bytes") + BENCH_SECTIONS:
        if name not in report:
            raise ValueError(f"cachetool bench --json: missing field {name!r}")
    if report["tokens"] != tokens:
        raise ValueError(f"cachetool bench --json: tokens {report['tokens']}, asked for {tokens}")
    for name in BENCH_SECTIONS:
        section = report[name]
        if not isinstance(section, dict) or any(not isinstance(section.get(f), int) for f in STAT_FIELDS):
            raise ValueError(f"cachetool bench --json: {name} must be {{{', '.join(STAT_FIELDS)}}} of integers")
    return report


def run_bench(cachetool: str, tokens: int, seed: int, work: Path, quick: bool) -> dict:
    folder = work / "bench"
    shutil.rmtree(folder, ignore_errors=True)
    argv = [cachetool, "bench", "--tokens", str(tokens), "--dir", str(folder), "--json", "--seed", str(seed)]
    if quick:
        argv += ["--lookups", "200"]
    done = subprocess.run(argv, capture_output=True, text=True)
    shutil.rmtree(folder, ignore_errors=True)
    if done.returncode != 0:
        raise RuntimeError(f"cachetool bench --tokens {tokens} failed ({done.returncode}): {done.stderr[-800:]}")
    return validate_bench(json.loads(done.stdout), tokens)


# ---------------------------------------------------------------------------------------------------- output


def fmt_ns(ns: float | None) -> str:
    if ns is None:
        return "—"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            value = ns / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{ns:.0f} ns"


def fmt_bytes(count: int | None) -> str:
    if count is None:
        return "—"
    return f"{count / 1e6:,.1f} MB" if count >= 1e6 else f"{count / 1e3:,.1f} kB"


def figure(size_result: dict, key: str) -> dict | None:
    if key.startswith("tc_bench_"):
        bench = size_result.get("tc_bench")
        return bench.get(key[len("tc_bench_"):]) if bench else None
    return size_result.get("results", {}).get(key)


def ratio_text(ratio: float) -> str:
    return f"{ratio:,.0f}×" if ratio >= 100 else f"{ratio:.2g}×" if ratio < 0.1 else f"{ratio:,.1f}×"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def write_markdown(report: dict, path: Path, png_name: str) -> None:
    meta, sizes = report["meta"], report["sizes"]
    keys = list(sizes)
    lines = [
        "# token-cache compared with MSAL Python and msal-extensions", "",
        f"Generated by `make compare` (Benchmarks/compare/compare.py) on {meta['date']}.", "",
        f"- Machine: {meta['cpu']}, {meta['cpus']} CPUs, Linux {meta['kernel']}",
        f"- Python {meta['python']}; msal {meta['versions']['msal']}, msal-extensions "
        f"{meta['versions']['msal-extensions']}; cachetool {meta['versions']['cachetool']}",
        f"- Population: seed {meta['seed']}, fixed now {pop.NOW}; per size N: N/10 accounts, "
        "2 realms each (home + guest), 4 clients (2 in a family), 10 access tokens per account over 8 "
        "(client, realm) buckets, 2-3 scopes per token, 3 refresh tokens and 8 ID tokens per account; secrets: "
        "access 1,400-1,599 B, refresh 900-1,099 B, ID token 950-1,099 B. Lookups ask for one of a stored "
        "token's scopes (a subset), uniformly over stored tokens; every lookup is a hit and its answer is checked.",
        "- Each cell: **p50** (p90, p99; samples). Ratio: this system's p50 divided by token-cache's p50 for the "
        "same operation and size (> 1 means token-cache is faster).",
    ]
    if not meta["bench_available"]:
        lines += ["", "> **Incomplete:** this `cachetool` has no `bench` subcommand, so the in-process token-cache "
                  "rows (lookup, write, open) are missing. Ratios marked † compare with the one-process-per-call "
                  "`cachetool lookup` / `cachetool ingest` figure instead (process start, store open, decryption and "
                  "JSON output included, on a store imported from the same MSAL file): that overstates "
                  "token-cache's cost, so a † ratio understates its lead."]
    lines += ["", "What each side measures: MSAL Python and the warm msal-extensions lookup are calls inside a "
              "running Python process on a plaintext in-memory dict; token-cache's in-process figures come from "
              "its own Swift harness on an encrypted LMDB store on disk (every read decrypts, every write is "
              "durable). The \"one process per …\" rows time a whole process from the outside on both sides.", ""]
    for category, title in CATEGORY_TITLES.items():
        rows = [row for row in ROWS if row[1] == category]
        lines += [f"## {title}", "",
                  "| System | What is timed | " + " | ".join(f"N = {int(k):,} | ratio" for k in keys) + " |",
                  "|---|---|" + "---:|---:|" * len(keys)]
        for key, _, system, what in rows:
            cells = []
            for size in keys:
                value = figure(sizes[size], key)
                reference, mark = figure(sizes[size], REFERENCE[category]), ""
                if reference is None and category in FALLBACK_REFERENCE:
                    reference, mark = figure(sizes[size], FALLBACK_REFERENCE[category]), " †"
                if value is None:
                    missing = "needs `cachetool bench`" if key.startswith("tc_bench_") else "—"
                    cells += [missing, ""]
                    continue
                cell = (f"**{fmt_ns(value['p50_ns'])}** ({fmt_ns(value['p90_ns'])}, {fmt_ns(value['p99_ns'])}; "
                        f"{value['samples']})")
                ratio = "" if reference is None or key == REFERENCE[category] else \
                    f"{ratio_text(value['p50_ns'] / max(1, reference['p50_ns']))}{mark}"
                cells += [cell, ratio if key != REFERENCE[category] else "1×"]
            lines.append(f"| {system} | {what} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Size", "", "| | " + " | ".join(f"N = {int(k):,}" for k in keys) + " |",
              "|---|" + "---:|" * len(keys)]
    def size_row(label: str, getter: Callable[[dict], object]) -> None:
        lines.append(f"| {label} | " + " | ".join(str(getter(sizes[k])) for k in keys) + " |")
    size_row("MSAL JSON file (msal-extensions' file, the import source)", lambda s: fmt_bytes(s.get("msal_json_bytes")))
    size_row("token-cache store after `cachetool import` of that file (allocated)",
             lambda s: fmt_bytes(s.get("store_bytes_after_import")))
    size_row("token-cache store, `cachetool bench` population", lambda s: fmt_bytes((s.get("tc_bench") or {}).get("store_bytes")))
    size_row("`cachetool import` of the file, seconds", lambda s: s.get("import_seconds", "—"))
    size_row("MSAL Python `deserialize()` of the file", lambda s: fmt_ns((s.get("results", {}).get("msal_deserialize") or {}).get("p50_ns")))
    lines += ["", f"![Latency against cache size]({png_name})", ""]
    path.write_text("\n".join(lines))


def write_chart(report: dict, path: Path) -> None:
    """Two log-log panels (lookup, write): p50 latency against the number of access tokens, a line per system."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = report["sizes"]
    styles = {
        "msal_lookup_subset": ("MSAL Python, subset scopes (scan)", "tab:orange", "-", "o"),
        "msal_lookup_exact": ("MSAL Python, exact scope set (O(1) key)", "tab:orange", ":", "o"),
        "ext_lookup": ("msal-extensions, warm", "tab:red", "-", "s"),
        "ext_process_lookup": ("msal-extensions, one process per lookup", "tab:red", "--", "s"),
        "tc_bench_lookup_hit": ("token-cache, in process (encrypted, on disk)", "tab:blue", "-", "D"),
        "tc_process_lookup": ("token-cache, one process per lookup (cachetool)", "tab:blue", "--", "D"),
        "msal_add": ("MSAL Python add(), in memory", "tab:orange", "-", "o"),
        "ext_add": ("msal-extensions add(), rewrites the file", "tab:red", "-", "s"),
        "tc_bench_ingest_durable": ("token-cache ingest, durable, in process", "tab:blue", "-", "D"),
        "tc_process_ingest": ("token-cache, one process per write (cachetool)", "tab:blue", "--", "D"),
    }
    panels = (("Silent lookup of one access token", ["msal_lookup_subset", "msal_lookup_exact", "ext_lookup",
               "ext_process_lookup", "tc_bench_lookup_hit", "tc_process_lookup"]),
              ("Write one token response", ["msal_add", "ext_add", "tc_bench_ingest_durable", "tc_process_ingest"]))
    figure_, axes = plt.subplots(1, 2, figsize=(13, 6.4), dpi=110)
    for axis, (title, keys) in zip(axes, panels):
        for key in keys:
            points = [(int(s), figure(sizes[s], key)["p50_ns"] / 1e3) for s in sizes if figure(sizes[s], key)]
            if not points:
                continue
            label, color, style, marker = styles[key]
            axis.plot([p[0] for p in points], [p[1] for p in points], color=color, linestyle=style, marker=marker,
                      linewidth=2.2 if key.startswith("tc_") else 1.6, label=label)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_title(title)
        axis.set_xlabel("access tokens in the cache")
        axis.set_ylabel("p50 latency (µs, log scale)")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    meta = report["meta"]
    note = f"{meta['cpu']}, {meta['cpus']} CPUs · {meta['date']} · msal {meta['versions']['msal']}, " \
           f"msal-extensions {meta['versions']['msal-extensions']}"
    if not meta["bench_available"]:
        note += " · token-cache in-process lines need `cachetool bench`"
    figure_.suptitle("token-cache vs MSAL Python and msal-extensions (same population)", fontsize=12)
    figure_.text(0.5, 0.005, note, ha="center", fontsize=8, color="dimgray")
    figure_.tight_layout(rect=(0, 0.03, 1, 0.96))
    figure_.savefig(path)
    plt.close(figure_)


# ------------------------------------------------------------------------------------------------------ main


def budgets_for(quick: bool) -> dict:
    """Per-case sample budgets. ``file``/``file_write`` cases cost a whole-file parse or rewrite (seconds at
    100k), so they get few samples; ``fast`` cases (µs) get up to a few thousand."""
    if quick:
        one = Budget(3, 20, 0.2)
        return {name: one for name in ("scan", "fast", "file", "file_write", "process", "process_file")}
    return {"scan": Budget(10, 2000, 4.0), "fast": Budget(200, 5000, 2.0), "file": Budget(3, 200, 4.0),
            "file_write": Budget(3, 100, 6.0), "process": Budget(20, 300, 5.0), "process_file": Budget(3, 100, 5.0)}


def run(args: argparse.Namespace) -> int:
    cachetool = str(Path(args.cachetool).resolve())
    if not os.access(cachetool, os.X_OK):
        print(f"compare: {cachetool} is not an executable cachetool (run `make release`)", file=sys.stderr)
        return 2
    has_bench = bench_available(cachetool)
    if not has_bench:
        print("compare: `cachetool bench` is not in this build (`cachetool bench --help` prints no "
              "'USAGE: cachetool bench'): the in-process token-cache figures will be missing; measuring the "
              "rest and the per-process cachetool fallback.", file=sys.stderr)
    # The first line of `--version` is "cachetool X.Y.Z" (then the format and C library versions).
    version_lines = subprocess.run([cachetool, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    version = version_lines[0].removeprefix("cachetool ").strip() if version_lines else ""
    report = {"meta": {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(), "cpus": os.cpu_count(), "kernel": platform.release(),
        "python": platform.python_version(), "seed": args.seed, "quick": args.quick,
        "bench_available": has_bench,
        "versions": {"msal": msal.__version__, "msal-extensions": importlib.metadata.version("msal-extensions"),
                     "cachetool": version or "unknown"},
    }, "sizes": {}}
    budgets = budgets_for(args.quick)
    work = Path(args.work)
    for tokens in args.sizes:
        print(f"compare: N = {tokens:,}: generating the population", file=sys.stderr, flush=True)
        folder = work / str(tokens)
        folder.mkdir(parents=True, exist_ok=True)
        population = pop.generate(tokens, args.seed)
        text = population.json_text()
        source = folder / "msal_token_cache.json"
        source.write_text(text)
        entry = {"population": population.describe(), "msal_json_bytes": len(text.encode()), "results": {}}
        print(f"compare: N = {tokens:,}: MSAL Python in memory", file=sys.stderr, flush=True)
        entry["results"].update(measure_msal(population, text, budgets))
        del text
        print(f"compare: N = {tokens:,}: msal-extensions (file persistence)", file=sys.stderr, flush=True)
        entry["results"].update(measure_msal_extensions(population, source, folder, budgets))
        print(f"compare: N = {tokens:,}: cachetool import, lookup and ingest processes", file=sys.stderr, flush=True)
        processes = measure_cachetool_processes(cachetool, population, source, folder, budgets)
        entry["results"].update(processes.pop("results"))
        entry.update(processes)
        if has_bench:
            print(f"compare: N = {tokens:,}: cachetool bench", file=sys.stderr, flush=True)
            entry["tc_bench"] = run_bench(cachetool, tokens, args.seed, folder, args.quick)
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
        report["sizes"][str(tokens)] = entry
    for tokens in args.tc_only_sizes:
        if not has_bench:
            print(f"compare: N = {tokens:,} (token-cache only) skipped: needs `cachetool bench`", file=sys.stderr)
            continue
        print(f"compare: N = {tokens:,}: cachetool bench only", file=sys.stderr, flush=True)
        report["sizes"][str(tokens)] = {"token_cache_only": True,
                                        "tc_bench": run_bench(cachetool, tokens, args.seed, work / str(tokens), args.quick)}
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    write_chart(report, out / f"{args.name}.png")
    write_markdown(report, out / f"{args.name}.md", f"{args.name}.png")
    print(f"compare: wrote {out / args.name}.md, .png and .json", file=sys.stderr)
    if not has_bench and not args.allow_missing_bench:
        print("compare: INCOMPLETE: `cachetool bench` is missing from this cachetool, so token-cache's in-process "
              "lookup, write and open figures are absent (ratios fall back to the per-process figures, marked †). Build a cachetool that has "
              "`cachetool bench`, or pass --allow-missing-bench (make compare COMPARE_ALLOW_PARTIAL=1) to accept "
              "the per-process figures alone.", file=sys.stderr)
        return 3
    return 0


def self_test(args: argparse.Namespace) -> int:
    """Seconds-long check of the harness: a 100-token quick run into a temporary folder, then the shape of its
    JSON, Markdown and PNG, the population's determinism, and the bench-contract validator."""
    assert pop.generate(100, 5).json_text() == pop.generate(100, 5).json_text(), "population is not deterministic"
    assert pop.generate(100, 5).json_text() != pop.generate(100, 6).json_text(), "the seed changes nothing"
    sample = {"p50_ns": 1, "p90_ns": 2, "p99_ns": 3, "samples": 4}
    good = {"tokens": 100, "cpu": "x", "population": {}, "store_bytes": 1, "msal_json_bytes": 2,
            **{name: dict(sample) for name in BENCH_SECTIONS}}
    validate_bench(good, 100)
    for broken in ({k: v for k, v in good.items() if k != "lookup_hit"}, {**good, "ingest_durable": {"p50_ns": 1}}):
        try:
            validate_bench(broken, 100)
        except ValueError:
            pass
        else:
            raise AssertionError("validate_bench accepted a broken report")
    real = str(Path(args.cachetool).resolve())
    check_run(args, real, expect_bench=bench_available(real))
    # The bench path, whether or not this build has `cachetool bench`: a wrapper answers `bench` with a report
    # of the documented shape and hands every other command to the real cachetool.
    with tempfile.TemporaryDirectory(prefix="compare-fakebench-") as temporary:
        fake = Path(temporary, "cachetool")
        report = json.dumps({**good, "tokens": "TOKENS"}).replace('"TOKENS"', "$tokens")
        fake.write_text(f"""#!/bin/bash
if [ "$1" = bench ]; then
  [ "$2" = --help ] && {{ echo "USAGE: cachetool bench --tokens <n>"; exit 0; }}
  tokens=$3; printf '%s\\n' '{report}' | sed "s/\\$tokens/$tokens/"; exit 0
fi
exec {real!r} "$@"
""")
        fake.chmod(0o755)
        check_run(args, str(fake), expect_bench=True)
    print("compare self-test: ok")
    return 0


def check_run(args: argparse.Namespace, cachetool: str, expect_bench: bool) -> None:
    """One quick 100-token run with ``cachetool``; asserts the shape of what it wrote."""
    with tempfile.TemporaryDirectory(prefix="compare-selftest-") as temporary:
        args.cachetool, args.sizes, args.tc_only_sizes, args.quick = cachetool, [100], [], True
        args.work, args.out_dir, args.name, args.keep = f"{temporary}/work", f"{temporary}/out", "compare", False
        args.allow_missing_bench = True
        status = run(args)
        assert status == 0, f"run returned {status}"
        report = json.loads(Path(temporary, "out", "compare.json").read_text())
        assert report["meta"]["bench_available"] == expect_bench, "bench detection"
        assert set(report["meta"]) >= {"date", "cpu", "cpus", "versions", "bench_available"}
        size = report["sizes"]["100"]
        assert size["msal_json_bytes"] > 0 and size["store_bytes_after_import"] > 0
        for key, *_ in ROWS:
            value = figure(size, key)
            if key.startswith("tc_bench_") and not report["meta"]["bench_available"]:
                assert value is None
                continue
            assert value is not None and all(isinstance(value[f], int) for f in STAT_FIELDS), key
            assert value["p50_ns"] <= value["p90_ns"] <= value["p99_ns"], key
        markdown = Path(temporary, "out", "compare.md").read_text()
        for needle in ["| System | What is timed |", "N = 100 | ratio", "MSAL Python", "msal-extensions",
                       "token-cache", "compare.png", report["meta"]["cpu"]]:
            assert needle in markdown, f"markdown lacks {needle!r}"
        if expect_bench:
            assert "needs `cachetool bench`" not in markdown and "| 1× |" in markdown, "bench rows or ratios missing"
        assert Path(temporary, "out", "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "no PNG written"


def parse_sizes(text: str) -> list[int]:
    return [int(part.replace("_", "")) for part in text.replace(",", " ").split() if part]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cachetool", help="path to a release cachetool (required unless --render-only)")
    parser.add_argument("--sizes", type=parse_sizes, default=[1000, 10000, 100000],
                        help="access-token counts for every system (multiples of 10)")
    parser.add_argument("--tc-only-sizes", type=parse_sizes, default=[],
                        help="sizes for token-cache alone (cachetool bench), e.g. 1000000")
    parser.add_argument("--seed", type=int, default=20260101)
    parser.add_argument("--quick", action="store_true", help="a handful of samples per case (shape checks)")
    parser.add_argument("--work", default=str(REPO / ".build" / "compare"), help="generated caches and stores")
    parser.add_argument("--keep", action="store_true", help="keep the generated caches and stores")
    parser.add_argument("--out-dir", default=str(REPO / "Benchmarks" / "results"))
    parser.add_argument("--name", default="compare", help="base name of the .md, .json and .png written")
    parser.add_argument("--allow-missing-bench", action="store_true",
                        help="exit 0 even when cachetool has no `bench` subcommand")
    parser.add_argument("--self-test", action="store_true", help="check the harness in seconds, then exit")
    parser.add_argument("--render-only", action="store_true",
                        help="rewrite the .md and .png from the .json of --out-dir/--name without measuring")
    args = parser.parse_args()
    if args.render_only:
        out = Path(args.out_dir)
        report = json.loads((out / f"{args.name}.json").read_text())
        write_chart(report, out / f"{args.name}.png")
        write_markdown(report, out / f"{args.name}.md", f"{args.name}.png")
        return 0
    return self_test(args) if args.self_test else run(args)


if __name__ == "__main__":
    sys.exit(main())
