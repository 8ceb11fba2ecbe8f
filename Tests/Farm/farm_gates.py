"""The farm test's gates: what the callers, the identity provider and the hosts saw, judged after the run; the summary
table (printed, and written as summary.md and summary.json into the run directory). Standard library only.

Every judgement works on the request records (host, user number, op, start, end, status, source, fingerprint,
expires_on, error), the chaos windows (when which hosts could not reach PostgreSQL and the identity provider) and the
identity provider's own counts. Times are Unix seconds of this machine's clock, which the hosts and the identity
provider share.
"""
import json
import os
from dataclasses import dataclass, field

# The cache's margin: an access token is served while it has more than this left (Docs/Semantics.md).
USABILITY_MARGIN = 300


@dataclass
class Inputs:
    args: dict
    mode: str
    fallback_reason: object
    records: list
    windows: list
    killed: object
    final: dict
    idp_stats: dict
    issued: dict
    host_stats: dict
    user_state: dict
    started: float
    load_started: float
    redemptions: list = field(default_factory=list)
    run_dir: str = "."


class Gate:
    def __init__(self, name, passed, numbers, detail=""):
        self.name, self.passed, self.numbers, self.detail = name, passed, numbers, detail


def sign_timeline(records):
    """User -> that user's sign-ins and sign-outs (records), by start."""
    timeline = {}
    for record in records:
        if record["op"] in ("sign-in", "sign-out"):
            timeline.setdefault(record["user"], []).append(record)
    for ops in timeline.values():
        ops.sort(key=lambda r: r["start"])
    return timeline


def stably_signed_in(timeline, user, start, end):
    """Whether `user` was signed in (acknowledged) from before `start` to after `end`, with no sign-in or sign-out
    under way then and none that failed before (whose outcome nobody knows)."""
    state = None
    for op in timeline.get(user, []):
        if op["start"] > end:
            break
        if op["end"] > start:  # overlaps the request
            return False
        if op["status"] != 200:
            return False
        state = op["op"]
    return state == "sign-in"


def host_windows(windows, host):
    return [w for w in windows if host in w["hosts"]]


def evaluate(inputs):
    a = inputs.args
    records = inputs.records
    tokens = [r for r in records if r["op"] in ("token", "final")]
    timeline = sign_timeline(records)
    windows = [dict(w, end=w["end"] if w["end"] is not None else float("inf")) for w in inputs.windows]
    killed = inputs.killed
    gates = []
    deadline_bound = a["deadline"] + a["slack"]

    # Orphaned redemptions: the identity provider issued tokens no host ever served. Each is explained when a
    # redemption of that user was under way (seen in /inflight) on a host the chaos cut off or killed at the time.
    served = {r.get("fingerprint") for r in tokens if r["status"] == 200}
    unserved = {}
    for user, fingerprints in inputs.issued.items():
        missing = [f for f in fingerprints if f not in served]
        if missing:
            unserved[int(user)] = len(missing)
    exposure = a["redeem_delay"] + a["deadline"] + a["slack"]

    def exposed(redemption):
        h, s = redemption["host"], redemption["since"]
        if killed and killed["host"] == h and s - 0.5 <= killed["t"] <= s + exposure:
            return True
        return any(w["start"] <= s + exposure and w["end"] >= s for w in host_windows(windows, h))
    exposed_by_user = {}
    for redemption in inputs.redemptions:
        if redemption.get("host") is not None and exposed(redemption):
            exposed_by_user[redemption["user"]] = exposed_by_user.get(redemption["user"], 0) + 1
    explained_orphans = sum(min(n, exposed_by_user.get(u, 0)) for u, n in unserved.items())
    unexplained_orphans = sum(max(0, n - exposed_by_user.get(u, 0)) for u, n in unserved.items())
    orphaned_users = {u for u in unserved if exposed_by_user.get(u, 0) > 0}

    # 1. Lost writes: every host answers every user signed in at the end with a 200.
    final_in = sorted(u for u, s in inputs.user_state.items() if s == "in")
    final_out = sorted(u for u, s in inputs.user_state.items() if s == "out")
    ambiguous = sorted(u for u, s in inputs.user_state.items() if s not in ("in", "out"))
    lost = []
    for rows in inputs.final.values():
        for r in rows:
            if r["user"] in final_in and r["status"] != 200:
                lost.append(r)
    lost_users = sorted({r["user"] for r in lost})
    lost_unexplained = [u for u in lost_users if u not in orphaned_users]
    gates.append(Gate(
        "acknowledged writes kept", not lost_unexplained,
        f"{len(final_in)} users x {len(inputs.final)} hosts checked; {len(lost)} answers not 200 "
        f"({len(lost_users)} users, {len(lost_unexplained)} of them without an orphaned redemption); {len(ambiguous)} users ambiguous",
        ", ".join(f"user {r['user']} on host{r['host']}: {r['status']} {r.get('error', '')}" for r in lost[:6])))

    # 2. Redemptions: no reuse beyond the orphaned redemptions the chaos explains, no other refusal, no orphan unexplained.
    reuse = inputs.idp_stats.get("reuse", 0)
    refused_other = inputs.idp_stats.get("refused", 0) - reuse
    rotations = sum(inputs.idp_stats.get("rotations_by_user", {}).values())
    strict = a.get("strict_reuse", False)
    reuse_ok = reuse == 0 if strict else reuse <= explained_orphans
    gates.append(Gate(
        "one redemption per rotation", reuse_ok and refused_other == 0 and unexplained_orphans == 0,
        f"{inputs.idp_stats.get('redemptions', 0)} redemptions, {rotations} rotations, reuse {reuse}, other refusals "
        f"{refused_other}; issued tokens never served: {explained_orphans} explained by chaos, {unexplained_orphans} not"
        + (" (strict: any reuse fails)" if strict else ""),
        ", ".join(f"user {u}: {n} unserved, {exposed_by_user.get(u, 0)} exposed" for u, n in sorted(unserved.items())[:6])))

    # 3. Stale answers after a sign-out.
    bound = a["stale_bound"]
    stale = []
    worst_late = 0.0
    for r in tokens:
        if r["status"] != 200:
            continue
        ops = [op for op in timeline.get(r["user"], []) if op["start"] < r["start"]]
        if not ops or ops[-1]["op"] != "sign-out" or ops[-1]["status"] != 200 or ops[-1]["end"] > r["start"]:
            continue
        acknowledged = ops[-1]["end"]
        effective = acknowledged
        for w in host_windows(windows, r["host"]):
            if w["start"] < acknowledged + bound and w["end"] > acknowledged:
                effective = max(effective, w["end"] + a["reconnect"])
        late = r["start"] - effective
        if r["start"] > effective:
            worst_late = max(worst_late, late)
        if late > bound:
            stale.append(r)
    gates.append(Gate(
        "no stale answer", not stale,
        f"{len(stale)} answers 200 later than {bound} s after a sign-out (for a host cut off then: after its link was "
        f"back + {a['reconnect']} s); latest 200 after that: {worst_late:.2f} s",
        ", ".join(f"user {r['user']} on host{r['host']} ({r.get('source')})" for r in stale[:6])))

    # 4. Convergence after each outage, per host.
    convergence, late_errors = {}, []
    for w in windows:
        if w["end"] == float("inf"):
            continue
        for h in w["hosts"]:
            after = [r for r in tokens if r["host"] == h and r["start"] >= w["end"]]
            first = next((r for r in sorted(after, key=lambda r: r["end"])
                          if r["status"] == 200 and r.get("source") != "l1"), None)
            key = f"{w['kind']}/host{h}"
            convergence[key] = (first["end"] - w["end"]) if first else float("inf")
            late_errors += [r for r in after if r["status"] == 503 and r["start"] > w["end"] + a["converge"]
                            and not any(x["start"] <= r["start"] <= x["end"] for x in host_windows(windows, h))]
    worst_convergence = max(convergence.values(), default=float("inf"))
    gates.append(Gate(
        "hosts converged", worst_convergence <= a["converge"] and not late_errors and bool(convergence),
        f"answers from the store again at most {worst_convergence:.2f} s after the server or link was back "
        f"(bound {a['converge']} s); {len(late_errors)} store errors later than that",
        ", ".join(f"{k}: {v:.2f} s" for k, v in sorted(convergence.items()))))

    # 5. Answers during the outage and the cut-off.
    in_window = []
    for w in windows:
        for r in tokens:
            if r["host"] in w["hosts"] and w["start"] <= r["start"] <= w["end"]:
                in_window.append((w, r))
    served_l1 = sum(1 for _, r in in_window if r["status"] == 200)
    typed, untyped, slow, l1_missed = 0, [], [], []
    worst_error = 0.0
    for w, r in in_window:
        if r["status"] == 200:
            continue
        duration = r["end"] - r["start"]
        if (r["status"], r.get("error")) in ((503, "store_unavailable"), (502, "idp_unavailable")) or \
                (r["status"] == 401 and not stably_signed_in(timeline, r["user"], r["start"], r["end"])):
            typed += 1
            worst_error = max(worst_error, duration)
            if duration > deadline_bound:
                slow.append(r)
        elif r["status"] != "down":
            untyped.append(r)
    by_pair = {}
    for w, r in in_window:
        by_pair.setdefault((id(w), r["host"], r["user"]), []).append(r)
    for rows in by_pair.values():
        rows.sort(key=lambda r: r["start"])
        valid_until, after = None, None
        for r in rows:
            if valid_until is not None and after < r["start"] < valid_until and r["status"] != 200:
                l1_missed.append(r)
            if r["status"] == 200 and r.get("source") == "l1" and r.get("expires_on"):
                valid_until = r["expires_on"] - USABILITY_MARGIN - 1
                after = r["end"]
    gates.append(Gate(
        "outage answers", not untyped and not slow and not l1_missed and bool(in_window),
        f"{len(in_window)} requests in the windows: {served_l1} served 200, {typed} typed errors (slowest "
        f"{worst_error:.2f} s, bound {deadline_bound} s), {len(slow)} slower, {len(untyped)} untyped, "
        f"{len(l1_missed)} not served although the host's L1 had answered the user",
        ", ".join(f"host{r['host']} {r['status']} {r.get('error', '')} {r['end'] - r['start']:.2f} s"
                  for r in (untyped + slow + l1_missed)[:6])))

    # 6. No hangs.
    hangs = [r for r in records if r["status"] == "hang"]
    gates.append(Gate("no hangs", not hangs,
                      f"{len(hangs)} of {len(records)} requests ran into the caller's {a['hang']} s timeout"))

    # 7. The killed lease holder held the others up at most a lease.
    if killed:
        held = [r for r in tokens if r["user"] == killed["user"] and r["host"] != killed["host"]
                and killed["t"] - a["lease"] <= r["start"] <= killed["restarted"] + a["lease"]]
        longest = max((r["end"] - r["start"] for r in held), default=0.0)
        limit = a["lease"] + deadline_bound
        gates.append(Gate("lease holder killed", longest <= limit,
                          f"host{killed['host']} SIGKILLed redeeming; {len(held)} other hosts' requests for that user, "
                          f"longest {longest:.2f} s (bound: lease {a['lease']} s + {deadline_bound} s)"))
    else:
        gates.append(Gate("lease holder killed", False, "no redemption in progress was found to kill"))

    # 8. Calm: outside the windows, a signed-in user's request is answered.
    def disturbed(r):
        for w in host_windows(windows, r["host"]):
            if r["start"] <= w["end"] + a["converge"] and r["end"] >= w["start"]:
                return True
        if killed:
            if r["host"] == killed["host"] and r["start"] <= killed["restarted"] and r["end"] >= killed["t"] - 1:
                return True
            if r["user"] == killed["user"] and r["start"] <= killed["restarted"] + a["lease"] + deadline_bound \
                    and r["end"] >= killed["t"] - a["lease"]:
                return True
        return False
    calm = [r for r in tokens if r["op"] == "token" and not disturbed(r)
            and stably_signed_in(timeline, r["user"], r["start"], r["end"])]
    calm_errors = [r for r in calm if r["status"] != 200 and r["user"] not in orphaned_users]
    orphan_errors = [r for r in calm if r["status"] != 200 and r["user"] in orphaned_users]
    gates.append(Gate(
        "calm answers", not calm_errors,
        f"{len(calm)} requests of signed-in users outside the windows: {len(calm_errors)} not 200"
        + (f" (and {len(orphan_errors)} for users whose rotation the chaos orphaned)" if orphan_errors else ""),
        ", ".join(f"host{r['host']} {r['status']} {r.get('error', '')}" for r in calm_errors[:6])))

    sources = {}
    for r in tokens:
        if r["status"] == 200:
            sources[r.get("source")] = sources.get(r.get("source"), 0) + 1
    summary = {
        "mode": inputs.mode, "fallback_reason": inputs.fallback_reason, "passed": all(g.passed for g in gates),
        "gates": [{"gate": g.name, "passed": g.passed, "numbers": g.numbers, "detail": g.detail} for g in gates],
        "requests": len(records), "token_requests": len(tokens), "sources": sources,
        "windows": [{"kind": w["kind"], "hosts": w["hosts"], "seconds": round(w["end"] - w["start"], 2)} for w in windows],
        "killed": killed, "idp": {k: v for k, v in inputs.idp_stats.items() if k != "rotations_by_user"},
        "hosts": inputs.host_stats, "users": {"in": len(final_in), "out": len(final_out), "ambiguous": len(ambiguous)},
        "run_seconds": round(max((r["end"] for r in records), default=inputs.started) - inputs.started, 1),
        "settings": {k: a[k] for k in ("hosts", "users", "callers", "expires_in", "redeem_delay", "deadline", "slack",
                                       "hang", "stale_bound", "reconnect", "converge", "lease", "outage", "cut", "seed")},
    }
    table = render(summary)
    print(table)
    with open(os.path.join(inputs.run_dir, "summary.json"), "w") as out:
        json.dump(summary, out, indent=1, default=str)
    with open(os.path.join(inputs.run_dir, "summary.md"), "w") as out:
        out.write(table + "\n")
    failed = [g for g in gates if not g.passed]
    for g in failed:
        print(f"farm: FAILED gate: {g.name}: {g.numbers}" + (f" [{g.detail}]" if g.detail else ""))
    print(f"farm: {len(gates) - len(failed)} gates passed, {len(failed)} failed (mode {inputs.mode})")
    return 0 if not failed else 1


def render(summary):
    lines = [f"Farm run: mode {summary['mode']}" + (f" ({summary['fallback_reason']})" if summary["fallback_reason"] else "")
             + f", {summary['settings']['hosts']} hosts, {summary['settings']['users']} users, "
             f"{summary['token_requests']} token requests, answers by source {summary['sources']}", "",
             "| gate | result | numbers |", "|---|---|---|"]
    for g in summary["gates"]:
        lines.append(f"| {g['gate']} | {'pass' if g['passed'] else 'FAIL'} | {g['numbers']} |")
    lines.append("")
    lines.append("Chaos: " + "; ".join(f"{w['kind']} {w['seconds']} s (hosts {w['hosts']})" for w in summary["windows"])
                 + (f"; host{summary['killed']['host']} SIGKILLed while redeeming" if summary["killed"] else ""))
    lines.append(f"Identity provider: {summary['idp']}")
    return "\n".join(lines)
