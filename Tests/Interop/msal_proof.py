"""Proves cachetool's MSAL JSON import/export against the real MSAL Python.

Why: the generator (``msal_caches.py``) makes MSAL Python write caches and answer a few hundred silent requests
against them. This runner checks that token-cache, after ``cachetool import``, gives the same answers (or, where
a query is marked, the answer of its own documented rule), that ``cachetool export`` writes a file MSAL Python
reads and answers from identically, and that a cache MSAL Python has written to after that imports again with
every identity and secret intact.

Usage: ``python msal_proof.py --cachetool PATH [--work DIR]`` (``make interop`` runs it). Prints one line per
check and closes with ``N passed, N failed``; exits non-zero on any failure, including when the cachetool
binary has no ``import``/``export`` commands yet.

The cachetool interface relied on (so both sides can be matched):

- ``cachetool init``, ``cachetool import FILE --json``, ``cachetool import FILE --replace --json``,
  ``cachetool export --include-secrets -o FILE``, ``cachetool info --json`` (``records`` counts per kind), and
  ``cachetool lookup --client-id C --account HOME_ACCOUNT_ID --environment HOST --realm REALM --scopes "S ..."
  [--token-type T --key-id K] [--parameter NAME=VALUE ...] --now NOW --json --reveal-secrets`` (``--account ""`` for an app token), each with
  the store and key given by ``TOKEN_CACHE_DIR`` and ``TOKEN_CACHE_KEY_FILE``;
- from ``lookup --json``: ``outcome``, ``refresh_recommended``, ``access_token.secret``, ``refresh_token.secret``;
- the exported file: MSAL's five sections (``AccessToken``, ``RefreshToken``, ``IdToken``, ``Account``,
  ``AppMetadata``) with MSAL's field names; ``key_id`` (or ``kid``/``keyid``) for a key id; times as integer
  strings or numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from typing import Any
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import msal_caches  # noqa: E402
from msal_caches import NOW, Answer, Query  # noqa: E402


class Results:
    """Collects checks; prints each as it is decided."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, ok: bool, text: str, detail: str | None = None) -> bool:
        if ok:
            self.passed += 1
            print("PASS " + text)
        else:
            self.failed += 1
            print("FAIL " + text + (("\n     " + detail.replace("\n", "\n     ")) if detail else ""))
        sys.stdout.flush()
        return ok

    def close(self) -> int:
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


class CacheTool:
    """Runs cachetool against one store; the key file sits next to it."""

    def __init__(self, binary: str, store: str):
        self.binary = binary
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TOKEN_CACHE_")}
        self.env.update(TOKEN_CACHE_DIR=store, TOKEN_CACHE_KEY_FILE=store + ".key")
        self.store = store

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.binary, *args], env=self.env, capture_output=True, text=True, timeout=120)

    def fresh(self) -> subprocess.CompletedProcess[str]:
        shutil.rmtree(self.store, ignore_errors=True)
        if os.path.exists(self.store + ".key"):
            os.remove(self.store + ".key")
        os.makedirs(os.path.dirname(self.store), exist_ok=True)
        return self.run("init")

    def lookup(self, query: Query) -> tuple[Answer | None, str]:
        args = ["lookup", "--client-id", query.client_id, "--account", query.home_account_id or "",
                "--environment", query.environment, "--realm", query.realm, "--scopes", " ".join(query.scopes),
                "--now", str(NOW), "--json", "--reveal-secrets"]
        if query.token_type:
            args += ["--token-type", query.token_type]
        if query.key_id:
            args += ["--key-id", query.key_id]
        for name, value in query.parameters:
            args += ["--parameter", f"{name}={value}"]
        result = self.run(*args)
        if result.returncode != 0:
            return None, f"exit {result.returncode}: {result.stderr.strip()[:300]}"
        try:
            out = json.loads(result.stdout)
        except ValueError:
            return None, "stdout is not JSON"
        at, rt = out.get("access_token") or {}, out.get("refresh_token") or {}
        return Answer(out.get("outcome"), at.get("secret"), rt.get("secret"), bool(out.get("refresh_recommended"))), ""


def store_export(tool: CacheTool, path: str) -> dict[str, Any]:
    """The store's export with secrets, written to ``path`` and parsed; empty when it could not be written or read."""
    tool.run("export", "--include-secrets", "-o", path)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def has_subcommand(binary: str, name: str) -> bool:
    """Whether cachetool documents a subcommand. An unknown one prints the top-level help with exit 0, so the
    exit code alone proves nothing: the subcommand's own usage line must be there."""
    result = subprocess.run([binary, name, "--help"], capture_output=True, text=True, timeout=60)
    return result.returncode == 0 and f"USAGE: cachetool {name}" in result.stdout


def compare(expected: Answer, got: Answer) -> bool:
    """Outcome, the access token of a hit, refresh_recommended, and the refresh token wherever MSAL reveals it.

    A hit that is not aging reveals no refresh token in MSAL Python (it does not read one), so cachetool's
    refresh-token companion is not compared there.
    """
    if (got.outcome, got.access_token, got.refresh_recommended) != (expected.outcome, expected.access_token, expected.refresh_recommended):
        return False
    if expected.outcome == "refresh" or expected.refresh_recommended:
        return got.refresh_token == expected.refresh_token
    return True


def answer_of(record: dict[str, Any]) -> Answer:
    return Answer(**record)


def query_of(record: dict[str, Any]) -> Query:
    q = dict(record)
    q["scopes"] = tuple(q["scopes"])
    q["parameters"] = tuple(tuple(pair) for pair in q.get("parameters", ()))
    return Query(**q)


# ---------------------------------------------------------------------------------------------------------------
# Identities, by token-cache's identity rules (Docs/Semantics.md, "Entities and their identity")
# ---------------------------------------------------------------------------------------------------------------

def lower(value: Any) -> str:
    return (value or "").lower() if isinstance(value, str) or value is None else str(value).lower()


def time_of(value: Any) -> int | None:
    return None if value in (None, "") else int(float(value))


def key_id_of(entry: dict[str, Any]) -> str:
    return entry.get("key_id") or entry.get("kid") or entry.get("keyid") or ""


def identities(cache: dict[str, Any]) -> dict[tuple[Any, ...], Any]:
    """Every record of a serialized cache under its token-cache identity, with what must survive a round trip.

    MSAL Python keeps one refresh token per scope set; token-cache keeps one per owner (family id, else client
    id) and environment, the newest by last_modification_time: so several Python tokens collapse to that one.
    """
    found: dict[tuple[Any, ...], Any] = {}
    for at in cache.get("AccessToken", {}).values():
        target = at.get("target") or ""
        scopes = frozenset(s.lower() for s in (target if isinstance(target, list) else target.split()))
        key = ("AccessToken", lower(at.get("home_account_id")), lower(at.get("environment")), lower(at.get("client_id")),
               lower(at.get("realm")), scopes, lower(at.get("token_type")) or "bearer", key_id_of(at), lower(at.get("ext_cache_key")))
        found[key] = (at.get("secret"), time_of(at.get("cached_at")), time_of(at.get("expires_on")), time_of(at.get("refresh_on")))
    newest: dict[tuple[Any, ...], tuple[int, str]] = {}
    for rt in cache.get("RefreshToken", {}).values():
        owner = rt.get("family_id") or rt.get("client_id")
        key = ("RefreshToken", lower(rt.get("home_account_id")), lower(rt.get("environment")), lower(owner))
        modified = time_of(rt.get("last_modification_time")) or 0
        if key not in newest or modified > newest[key][0]:
            newest[key] = (modified, rt.get("secret"))
    found.update({key: secret for key, (_, secret) in newest.items()})
    for idt in cache.get("IdToken", {}).values():
        found[("IdToken", lower(idt.get("home_account_id")), lower(idt.get("environment")), lower(idt.get("client_id")),
               lower(idt.get("realm")))] = idt.get("secret")
    for account in cache.get("Account", {}).values():
        found[("Account", lower(account.get("home_account_id")), lower(account.get("environment")), lower(account.get("realm")))] = (
            account.get("username") or None, account.get("local_account_id") or None, account.get("authority_type"))
    for metadata in cache.get("AppMetadata", {}).values():
        found[("AppMetadata", lower(metadata.get("client_id")), lower(metadata.get("environment")))] = metadata.get("family_id") or None
    return found


def identity_diff(expected: dict[tuple[Any, ...], Any], got: dict[tuple[Any, ...], Any], *, superset: bool = False) -> str:
    """What differs, naming kinds and counts only (never a secret); empty when equal."""
    missing = [k for k in expected if k not in got]
    changed = [k for k in expected if k in got and got[k] != expected[k]]
    extra = [] if superset else [k for k in got if k not in expected]
    if not (missing or changed or extra):
        return ""
    def kinds(keys: list[tuple[Any, ...]]) -> str:
        return str(msal_caches._count_by(keys, lambda k: k[0]))
    return f"missing {len(missing)} {kinds(missing)}, different values {len(changed)} {kinds(changed)}, unexpected {len(extra)} {kinds(extra)}"


def counts_by_kind(cache: dict[str, Any]) -> dict[str, int]:
    return msal_caches._count_by(identities(cache), lambda k: k[0])


# ---------------------------------------------------------------------------------------------------------------
# The proof
# ---------------------------------------------------------------------------------------------------------------

def extra_events(cache: dict[str, Any], name: str) -> tuple[list[tuple[dict[str, Any], int]], list[Query]]:
    """Token responses MSAL adds after the round trip, and a query that must hit each new access token.

    One sign-in of a new user in a new tenant (family app, so a family refresh token), and one new scope set
    for an account the cache already holds.
    """
    builder = msal_caches.CacheBuilder(name + "-extra", seed=9000 + len(name))
    newcomer = builder.user(builder.tenant("woodgrove.onmicrosoft.com"), msal_caches.PUBLIC)
    builder.user_response(msal_caches.PUBLIC, newcomer, msal_caches.OFFICE, ("User.Read", "Sites.Read.All"), foci=True, state="valid")
    account = sorted((a for a in cache["Account"].values() if a["environment"] == msal_caches.PUBLIC.writer_host
                      and a["home_account_id"].endswith("." + a["realm"])), key=lambda a: a["home_account_id"])[0]
    oid, tid = account["home_account_id"].split(".")
    known = msal_caches.User(oid, msal_caches.Tenant(tid, "contoso.onmicrosoft.com"), "Known User", account["username"], msal_caches.PUBLIC)
    builder.user_response(msal_caches.PUBLIC, known, msal_caches.NOTES_APP, ("Tasks.ReadWrite",), state="valid", with_refresh_in=False)
    events = [(p.event, p.time) for p in sorted(builder.events, key=lambda p: p.time)]
    queries = [Query(p.written.client_id, p.written.user.hid, p.written.host, p.written.tenant_segment,
                     tuple(s for s in p.written.scopes if s not in msal_caches.RESERVED_SCOPES and s != "email"))
               for p in builder.events]
    return events, queries


def check_added_tokens_found(results: Results, tool: CacheTool, serialized: str, queries: list[Query], text: str) -> None:
    """Each query, which must hit a token MSAL Python added to ``serialized``, gets that answer from the store too."""
    names = msal_caches.secret_names(json.loads(serialized))
    for query in queries:
        msal_says = msal_caches.msal_answer(serialized, query)
        got, error = tool.lookup(query)
        results.check(msal_says.outcome == "hit" and got is not None and compare(msal_says, got),
                      f"{text} ({msal_says.describe(names)})", f"cachetool: {got.describe(names) if got else error}")


def prove_cache(results: Results, cachetool: str, work: str, generated: str, name: str, records: list[dict[str, Any]]) -> None:
    source = os.path.join(generated, f"{name}.msal.json")
    with open(source, encoding="utf-8") as f:
        original_text = f.read()
    original = json.loads(original_text)
    tool = CacheTool(cachetool, os.path.join(work, "stores", name))

    # 1. Import what MSAL Python wrote.
    created = tool.fresh()
    if not results.check(created.returncode == 0, f"{name}: cachetool init", created.stderr.strip()):
        return
    imported = tool.run("import", source, "--json")
    ok = imported.returncode == 0
    try:
        json.loads(imported.stdout)
    except ValueError:
        ok = False
    if not results.check(ok, f"{name}: cachetool import {os.path.basename(source)} --json (exit 0, JSON on stdout)",
                         f"exit {imported.returncode}: {imported.stderr.strip()[:500]}"):
        return
    info = tool.run("info", "--json")
    got_counts = json.loads(info.stdout).get("records", {}) if info.returncode == 0 else {}
    want_counts = counts_by_kind(original)
    results.check({k: got_counts.get(k, 0) for k in want_counts} == want_counts,
                  f"{name}: record counts after import are one per token-cache identity {want_counts}",
                  f"cachetool info --json records: {got_counts} (expired access tokens are expected to be kept: import judges no expiry)")

    # 2. Every query: token-cache's answer against MSAL Python's (or our documented rule where marked).
    names = msal_caches.secret_names(original)
    agreed = marked = 0
    for record in records:
        query, expected = query_of(record["query"]), answer_of(record["expected"])
        got, error = tool.lookup(query)
        label = f"{record['id']}: {expected.describe(names)}"
        if record["differences"]:
            label += f" [token-cache rule: {', '.join(record['differences'])}]"
        if got is None:
            results.check(False, label, f"cachetool lookup failed: {error}")
            continue
        if results.check(compare(expected, got), label,
                         f"cachetool: {got.describe(names)}" + (f"\nnote: {record['note']}" if record["note"] else "")):
            marked += bool(record["differences"])
            agreed += not record["differences"]

    # 3. Export, and MSAL Python reads the export.
    exported_path = os.path.join(work, "roundtrip", f"{name}.export.json")
    os.makedirs(os.path.dirname(exported_path), exist_ok=True)
    exported = tool.run("export", "--include-secrets", "-o", exported_path)
    exported_text = ""
    if exported.returncode == 0 and os.path.exists(exported_path):
        with open(exported_path, encoding="utf-8") as f:
            exported_text = f.read()
    if not results.check(bool(exported_text), f"{name}: cachetool export --include-secrets -o FILE",
                         f"exit {exported.returncode}: {exported.stderr.strip()[:500]}"):
        return
    try:
        exported_cache = json.loads(exported_text)
    except ValueError as error:
        results.check(False, f"{name}: the export is JSON", str(error))
        return
    results.check(not identity_diff(identities(original), identities(exported_cache)),
                  f"{name}: the export holds every identity, secret and time of the MSAL cache",
                  identity_diff(identities(original), identities(exported_cache)))
    mismatches = []
    for record in records:
        if record["differences"]:
            continue  # MSAL's answer there depends on Python-only details (insertion order, exact host), not on the data
        query = query_of(record["query"])
        try:
            again = msal_caches.msal_answer(exported_text, query)
        except Exception as error:  # noqa: BLE001 — any failure of MSAL on our file is a finding
            mismatches.append(f"{record['id']}: MSAL Python failed on the export: {type(error).__name__}: {error}")
            continue
        if again != answer_of(record["msal"]):
            mismatches.append(f"{record['id']}: on the original {answer_of(record['msal']).describe(names)}; on the export {again.describe(names)}")
    results.check(not mismatches, f"{name}: MSAL Python answers {sum(1 for r in records if not r['differences'])} queries "
                                  f"from the export as from its own cache", "\n".join(mismatches[:20]))

    # 4. MSAL Python signs out of, rotates in and adds to the export; cachetool imports the result.
    prove_msal_changes_export(results, cachetool, work, name, exported_text, original)

    # 5. MSAL Python writes to the exported cache; cachetool imports the result again.
    events, new_queries = extra_events(original, name)
    cache = msal_caches.msal.SerializableTokenCache()
    cache.deserialize(exported_text)
    for event, time in events:
        cache.add(event, now=time)
    rewritten_text = cache.serialize()
    rewritten_path = os.path.join(work, "roundtrip", f"{name}.msal-rewritten.json")
    with open(rewritten_path, "w", encoding="utf-8") as f:
        f.write(rewritten_text)
    rewritten = json.loads(rewritten_text)
    second = CacheTool(cachetool, os.path.join(work, "stores", name + "-reimport"))
    second.fresh()
    reimported = second.run("import", rewritten_path, "--json")
    if results.check(reimported.returncode == 0, f"{name}: cachetool import of the cache MSAL Python rewrote",
                     f"exit {reimported.returncode}: {reimported.stderr.strip()[:500]}"):
        again_path = os.path.join(work, "roundtrip", f"{name}.export-2.json")
        again_cache = store_export(second, again_path)
        diff = identity_diff(identities(rewritten), identities(again_cache))
        results.check(not diff, f"{name}: identities and secrets survive MSAL's rewrite and a second import", diff)
    replaced = tool.run("import", rewritten_path, "--replace", "--json")
    if results.check(replaced.returncode == 0, f"{name}: cachetool import --replace of the rewritten cache into the first store",
                     f"exit {replaced.returncode}: {replaced.stderr.strip()[:500]}"):
        replaced_path = os.path.join(work, "roundtrip", f"{name}.export-replace.json")
        replaced_cache = store_export(tool, replaced_path)
        diff = identity_diff(identities(rewritten), identities(replaced_cache), superset=True)
        results.check(not diff, f"{name}: after --replace the store holds every identity and secret of the rewritten cache", diff)
    check_added_tokens_found(results, second, rewritten_text, new_queries, f"{name}: the token MSAL added after the round trip is found")
    print(f"---- {name}: {agreed} queries agree with MSAL Python, {marked} follow token-cache's documented rule instead")


# ---------------------------------------------------------------------------------------------------------------
# MSAL Python changes an export: sign-out, rotation, removal, a new sign-in (its own key maker finds every entry)
# ---------------------------------------------------------------------------------------------------------------

def foreign_keys(serialized: str) -> dict[str, int]:
    """Entries whose key is not the one MSAL Python's key maker derives from the entry's own fields, by section.

    ``key_makers`` is indexed by credential type, whose values are the section names.
    """
    cache = msal_caches.msal.SerializableTokenCache()
    cache.deserialize(serialized)
    found: dict[str, int] = {}
    for section, entries in json.loads(serialized).items():
        make = cache.key_makers.get(section)
        if make is None or not isinstance(entries, dict):
            continue
        for key, entry in entries.items():
            if make(**entry) != key:
                found[section] = found.get(section, 0) + 1
    return found


def owned_by(serialized: str, hid: str, environment: str) -> dict[str, int]:
    """Credentials and accounts of one account in one environment, by section (app metadata is nobody's)."""
    counts: dict[str, int] = {}
    for section, entries in json.loads(serialized).items():
        if section == "AppMetadata" or not isinstance(entries, dict):
            continue
        for entry in entries.values():
            if entry.get("home_account_id") == hid and entry.get("environment") == environment:
                counts[section] = counts.get(section, 0) + 1
    return counts


def secrets_of(serialized: str, section: str) -> list[str]:
    return [entry.get("secret") for entry in json.loads(serialized).get(section, {}).values()]


def sign_out(cache: Any, hid: str, environment: str) -> None:
    """``remove_account`` of this account, by every client that holds a refresh token or ID token of it.

    MSAL Python's sign-out removes the calling app's own and family refresh tokens and every access token, ID
    token and account of the (home account, environment); another app's refresh token needs that app's sign-out.
    """
    data = json.loads(cache.serialize())
    mine = [e for section in ("RefreshToken", "IdToken", "AccessToken") for e in data.get(section, {}).values()
            if e.get("home_account_id") == hid and e.get("environment") == environment]
    realms = sorted({e.get("realm") for e in data.get("Account", {}).values()
                     if e.get("home_account_id") == hid and e.get("environment") == environment and e.get("realm")})
    authority = f"https://{environment}/{realms[0] if realms else 'organizations'}"
    for client_id in sorted({e["client_id"] for e in mine}):
        app = msal_caches.msal.PublicClientApplication(
            client_id, authority=authority, http_client=msal_caches.StubHttpClient(), token_cache=cache)
        app.remove_account({"home_account_id": hid, "environment": environment})


def reimport_matches(results: Results, tool: CacheTool, work: str, label: str, text: str) -> None:
    """``cachetool import`` of what MSAL Python serialized, into a fresh store: the store's export holds the same
    identities and secrets (token-cache's one refresh token per owner, the newest)."""
    path = os.path.join(work, "roundtrip", f"{label}.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    tool.fresh()
    imported = tool.run("import", path, "--json")
    if not results.check(imported.returncode == 0, f"{label}: cachetool import of what MSAL Python wrote",
                         f"exit {imported.returncode}: {imported.stderr.strip()[:500]}"):
        return
    exported_path = os.path.join(work, "roundtrip", f"{label}.export.json")
    again = store_export(tool, exported_path)
    diff = identity_diff(identities(json.loads(text)), identities(again))
    results.check(not diff, f"{label}: the store holds exactly its identities and secrets", diff)


def prove_msal_changes_export(results: Results, cachetool: str, work: str, name: str, exported_text: str,
                              original: dict[str, Any]) -> None:
    """MSAL Python, through its public API, signs out of, rotates in and adds to a cachetool export."""
    label = f"{name}: MSAL Python changes the export"
    foreign = foreign_keys(exported_text)
    results.check(not foreign, f"{label}: every key is the one MSAL Python's key maker derives from the entry",
                  f"keys MSAL Python would not derive, by section: {foreign}")
    exported = json.loads(exported_text)
    accounts = sorted({(e["home_account_id"], e["environment"]) for section in ("AccessToken", "RefreshToken", "IdToken", "Account")
                       for e in exported.get(section, {}).values() if e.get("home_account_id")})

    # Every account signed out, one after the other: none of its credentials stays, nobody else's goes.
    cache = msal_caches.msal.SerializableTokenCache()
    cache.deserialize(exported_text)
    leftovers, collateral = [], []
    for hid, environment in accounts:
        before = cache.serialize()
        # Every access-token search of MSAL Python also drops the expired access tokens of everyone: not collateral.
        others = {k: v for k, v in identities(json.loads(before)).items() if not (k[1] == hid.lower() and k[2] == environment.lower())
                  and not (k[0] == "AccessToken" and v[2] is not None and v[2] < NOW)}
        try:
            with mock.patch("time.time", return_value=float(NOW)):
                sign_out(cache, hid, environment)
        except Exception as error:  # noqa: BLE001 — MSAL Python failing on our file is the finding
            leftovers.append(f"{environment}: MSAL Python failed: {type(error).__name__} {str(error)[:200]}")
            continue
        after = cache.serialize()
        left = owned_by(after, hid, environment)
        if left:
            leftovers.append(f"{environment}: {left}")
        kept = identities(json.loads(after))
        if any(k[0] != "AppMetadata" and k not in kept for k in others):
            collateral.append(environment)
    results.check(not leftovers, f"{label}: remove_account of each of {len(accounts)} accounts leaves none of its credentials",
                  f"{len(leftovers)} accounts keep entries (by section): " + "; ".join(leftovers[:8]))
    results.check(not collateral, f"{label}: signing one account out leaves the other accounts' records",
                  f"{len(collateral)} sign-outs removed another account's records")
    signed_out = cache.serialize()
    left = {section: len(entries) for section, entries in json.loads(signed_out).items()
            if section in ("RefreshToken", "IdToken", "Account") and entries}
    results.check(not left, f"{label}: after every sign-out no refresh token, ID token or account is left", f"left: {left}")
    reimport_matches(results, CacheTool(cachetool, os.path.join(work, "stores", name + "-signed-out")), work, f"{name}.msal-signed-out", signed_out)

    # A refresh token rotated (update_rt), another removed (remove_rt), a new sign-in added.
    cache = msal_caches.msal.SerializableTokenCache()
    cache.deserialize(exported_text)
    refresh_tokens = sorted(cache.search(cache.CredentialType.REFRESH_TOKEN), key=lambda rt: (rt["home_account_id"], rt["environment"], rt["client_id"]))
    family = next((rt for rt in refresh_tokens if rt.get("family_id")), None)
    removed = next((rt for rt in refresh_tokens if not rt.get("family_id") and rt["home_account_id"] != (family or {}).get("home_account_id")), None)
    if not results.check(family is not None and removed is not None, f"{label}: the export has a family refresh token and another account's own one"):
        return
    count = len(secrets_of(exported_text, "RefreshToken"))
    old_secret, new_secret = family["secret"], f"{name}-rotated-family-refresh-token"
    cache.update_rt(dict(family), new_secret)
    rotated = secrets_of(cache.serialize(), "RefreshToken")
    results.check(old_secret not in rotated and rotated.count(new_secret) == 1 and len(rotated) == count,
                  f"{label}: update_rt replaces the redeemed family refresh token (old secret gone, the new one once)",
                  f"old present: {old_secret in rotated}, new present {rotated.count(new_secret)} times, {len(rotated)} refresh tokens (was {count})")
    cache.remove_rt(dict(removed))
    after_removal = secrets_of(cache.serialize(), "RefreshToken")
    results.check(removed["secret"] not in after_removal and len(after_removal) == count - 1,
                  f"{label}: remove_rt removes a client's own refresh token",
                  f"still present: {removed['secret'] in after_removal}, {len(after_removal)} refresh tokens (was {count})")
    events, new_queries = extra_events(original, name)
    for event, time in events:
        cache.add(event, now=time)
    changed_text = cache.serialize()
    store = CacheTool(cachetool, os.path.join(work, "stores", name + "-msal-changed"))
    reimport_matches(results, store, work, f"{name}.msal-changed", changed_text)
    check_added_tokens_found(results, store, changed_text, new_queries, f"{label}: the token MSAL added is found after the re-import")


# ---------------------------------------------------------------------------------------------------------------
# Adopting Azure CLI's and Azure Identity's plaintext caches: import --from TOOL --shred-source
# ---------------------------------------------------------------------------------------------------------------

#: Where each tool keeps its plaintext cache under a home directory (what ``import --from`` looks for).
AZURE_TOOL_FILES = {"azure-cli": ".azure/msal_token_cache.json", "azure-identity": ".IdentityService/msal.cache.nocae"}
#: What Azure CLI asks for on sign-in: Azure Resource Manager, Microsoft Graph, Key Vault and Storage.
AZURE_CLI_SCOPES = (("https://management.core.windows.net//.default",), ("https://graph.microsoft.com/.default",),
                    ("https://vault.azure.net/.default",), ("https://storage.azure.com/.default",))


def azure_tool_cache(name: str) -> tuple[str, str]:
    """What MSAL Python writes for Azure CLI (a family app): a sign-in for several scope sets in one second (a
    refresh token per scope set, all tied, each with its ID token), and, serialized after a later refresh that
    re-issued the ID token, rotated one refresh token and added a scope set, the same cache again."""
    builder = msal_caches.CacheBuilder(name, seed=4242 + len(name))
    user = builder.user(builder.tenant("contoso.onmicrosoft.com"), msal_caches.PUBLIC)
    signed_in = NOW - 7200
    for scopes in AZURE_CLI_SCOPES[:3]:
        builder.user_response(msal_caches.PUBLIC, user, msal_caches.AZURE_CLI, scopes, foci=True, after=signed_in)
    cache = msal_caches.msal.SerializableTokenCache()
    for planned in builder.events:
        cache.add(planned.event, now=planned.time)
    first = cache.serialize()
    builder.events.clear()
    for scopes in (AZURE_CLI_SCOPES[0], AZURE_CLI_SCOPES[3]):
        builder.user_response(msal_caches.PUBLIC, user, msal_caches.AZURE_CLI, scopes, foci=True, after=signed_in + 3600)
    for planned in builder.events:
        cache.add(planned.event, now=planned.time)
    return first, cache.serialize()


def prove_azure_tool_adoption(results: Results, cachetool: str, work: str) -> None:
    """``cachetool import --from TOOL --shred-source`` takes each tool's file as MSAL Python wrote it, on an empty
    store and again after the tool wrote more, and shreds it each time; the counts say what happened."""
    for tool_name, relative in AZURE_TOOL_FILES.items():
        label = f"{tool_name} adoption"
        tool = CacheTool(cachetool, os.path.join(work, "stores", tool_name))
        home = os.path.join(work, "homes", tool_name)
        shutil.rmtree(home, ignore_errors=True)
        tool.env = {k: v for k, v in tool.env.items() if k != "AZURE_CONFIG_DIR"}
        tool.env["HOME"] = home
        path = os.path.join(home, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tool.fresh()
        first, second = azure_tool_cache(tool_name)
        for step, text in (("sign-in, three scope sets in one second", first), ("after a refresh re-issued the ID token", second)):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(path, 0o600)
            run = tool.run("import", "--from", tool_name, "--shred-source", "--json")
            try:
                report = json.loads(run.stdout)
            except ValueError:
                report = {}
            results.check(run.returncode == 0 and report.get("shredded") is True and not os.path.exists(path),
                          f"{label}, {step}: imported and shredded in one command",
                          f"exit {run.returncode}, kept because: {report.get('kept_because')}; "
                          f"unverified: {[u.get('reason') for u in (report.get('verified') or {}).get('unverified', [])]}")
            results.check("CANARY" not in run.stdout + run.stderr and not any(secret and secret in run.stdout + run.stderr
                          for secret in msal_caches.secret_names(json.loads(text))),
                          f"{label}, {step}: no secret in the output")
            cache = json.loads(text)
            tied = len(cache["RefreshToken"]) - 1
            if step.startswith("sign-in"):
                kept = sum((report.get("kept_existing") or {}).values())
                merged = (report.get("merged_in_file") or {}).get("RefreshToken")
                results.check(kept == 0 and merged == tied and (report.get("verified") or {}).get("merged") == tied,
                              f"{label}, {step}: on an empty store no stored record is kept, {tied} same-second refresh tokens are merged",
                              f"kept_existing {report.get('kept_existing')}, merged_in_file {report.get('merged_in_file')}, "
                              f"verified {report.get('verified')}")
            exported_path = os.path.join(work, "roundtrip", f"{tool_name}.adopted.json")
            stored = store_export(tool, exported_path)
            diff = identity_diff(identities(cache), identities(stored))
            results.check(not diff, f"{label}, {step}: the store holds the file's identities and newest secrets "
                                    f"(of same-second refresh tokens the file's first, the one MSAL Python redeems first)", diff)


def main() -> int:
    msal_caches.ensure_fixed_hash_seed()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cachetool", required=True, help="path of a built cachetool binary")
    parser.add_argument("--work", default=os.path.join(".build", "interop"), help="directory for generated files and stores")
    args = parser.parse_args()
    results = Results()
    generated = os.path.join(args.work, "generated")
    shutil.rmtree(generated, ignore_errors=True)

    print(f"---- generator (msal {msal_caches.msal.__version__}, now {NOW})")
    manifest = msal_caches.generate(generated)
    for name, info in manifest["caches"].items():
        print(f"     {name}: {info['counts']}, {info['queries']} queries")
    for ok, text in [msal_caches.deterministic(generated)] + msal_caches.self_check(generated):
        results.check(ok, "generator: " + text)

    print("---- cachetool")
    binary = os.path.abspath(args.cachetool)
    if not results.check(os.access(binary, os.X_OK), f"cachetool binary at {binary}"):
        return results.close()
    missing = [name for name in ("import", "export") if not has_subcommand(binary, name)]
    if not results.check(not missing, "cachetool has the import and export commands",
                         f"cachetool {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing: `cachetool {missing[0]} --help` shows no "
                         f"'USAGE: cachetool {missing[0]}'. The MSAL interop proof cannot run until "
                         f"`cachetool import FILE [--replace] [--skip-invalid] [--json]` and "
                         f"`cachetool export [-o FILE] [--include-secrets]` exist." if missing else None):
        return results.close()

    with open(os.path.join(generated, "queries.json"), encoding="utf-8") as f:
        queries = json.load(f)
    for name in manifest["caches"]:
        print(f"---- {name}")
        prove_cache(results, binary, os.path.abspath(args.work), generated, name, [q for q in queries if q["cache"] == name])
    print("---- Azure CLI and Azure Identity caches adopted with --shred-source")
    prove_azure_tool_adoption(results, binary, os.path.abspath(args.work))
    return results.close()


if __name__ == "__main__":
    sys.exit(main())
