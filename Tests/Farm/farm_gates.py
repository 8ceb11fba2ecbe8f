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

# The chaos after which a reuse may be unavoidable, by name: a lease holder SIGKILLed, a host cut off. Any other reuse
# (one after a server stop, or outside the chaos) fails the gate.
REUSE_UNAVOIDABLE = {"killed", "cut"}


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
    machine: dict = field(default_factory=dict)
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

    # Orphaned redemptions: the identity provider issued tokens no host ever served. A redemption is exposed when,
    # while it ran (seen in /inflight), its host was killed or cut off from the store: its rotation may then be taken
    # by the identity provider and never stored, and the next redemption of the old token is a reuse, after which
    # the user must sign in again. A token may also go unserved without a fault: the user was signed out while it
    # was being redeemed (the rotation is dropped), or right after signing in, before anyone asked.
    #
    # Of the exposures, only two can make a reuse unavoidable: the host SIGKILLed (the response dies with the
    # process) and the host cut off (the response dies on the link, or the lease lapses while the host holds the
    # rotation and another host redeems the old token; the farm's cut is longer than the lease). A server stop is not
    # one: the host holds the response and stores it once the server is back (the client's late store), so a reuse
    # there is a fault.
    served = {r.get("fingerprint") for r in tokens if r["status"] == 200}
    unserved = {}
    for user, fingerprints in inputs.issued.items():
        missing = [f for f in fingerprints if f not in served]
        if missing:
            unserved[int(user)] = len(missing)
    exposure = a["redeem_delay"] + a["deadline"] + a["slack"]

    def exposures(redemption):
        """What chaos the redemption met: "killed", and the kinds of the windows of its host ("postgresql", "cut")."""
        h, s = redemption["host"], redemption["since"]
        kinds = set()
        if killed and killed["host"] == h and s - 0.5 <= killed["t"] <= s + exposure:
            kinds.add("killed")
        kinds.update(w["kind"] for w in host_windows(windows, h) if w["start"] <= s + exposure and w["end"] >= s)
        return kinds
    exposed = [r for r in inputs.redemptions if r.get("host") is not None and exposures(r)]
    exposed_users = {r["user"] for r in exposed}
    # User -> how many of the user's redemptions met chaos that can make a reuse unavoidable.
    reuse_allowed = {}
    for r in exposed:
        if exposures(r) & REUSE_UNAVOIDABLE:
            reuse_allowed[r["user"]] = reuse_allowed.get(r["user"], 0) + 1
    orphaned_users = {u for u in unserved if u in exposed_users}
    signed_out_users = {u for u, ops in timeline.items() if any(op["op"] == "sign-out" for op in ops)}
    unexplained_unserved = {u: n for u, n in unserved.items() if u not in orphaned_users and u not in signed_out_users}
    # For the report: an unexplained orphan whose redemption overlapped a store error of that host and user outside
    # the chaos (the store timed out between the redemption and the store of its rotation: an overloaded server).
    store_error_orphans = {r["user"] for r in inputs.redemptions if r["user"] in unexplained_unserved and any(
        t["user"] == r["user"] and t["host"] == r.get("host") and t["status"] == 503 and t["start"] <= r["since"] <= t["end"]
        for t in tokens)}

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

    # 2. Redemptions: a reuse only for a user whose redemption met a kill or a cut (REUSE_UNAVOIDABLE), at most one per
    # such redemption (--strict-reuse: none at all); no other refusal; and no token unserved for a user neither
    # exposed nor signed out.
    reuse = inputs.idp_stats.get("reuse", 0)
    refused_other = inputs.idp_stats.get("refused", 0) - reuse
    rotations = sum(inputs.idp_stats.get("rotations_by_user", {}).values())
    strict = a.get("strict_reuse", False)
    reuses = inputs.idp_stats.get("reuses")
    reuse_by_user = {}
    for entry in reuses or []:
        reuse_by_user[entry["user"]] = reuse_by_user.get(entry["user"], 0) + 1
    if strict:
        unexplained_reuse = dict(reuse_by_user) if reuses is not None else ({"?": reuse} if reuse else {})
    elif reuses is not None:
        unexplained_reuse = {u: n for u, n in reuse_by_user.items() if n > reuse_allowed.get(u, 0)}
    else:  # an identity provider that does not list its reuses: judged by their count
        allowed = sum(reuse_allowed.values())
        unexplained_reuse = {"?": reuse - allowed} if reuse > allowed else {}
    gates.append(Gate(
        "one redemption per rotation", not unexplained_reuse and refused_other == 0 and not unexplained_unserved,
        f"{inputs.idp_stats.get('redemptions', 0)} redemptions, {rotations} rotations, reuse {reuse} "
        f"({sum(unexplained_reuse.values())} {'in all (strict)' if strict else 'not after a kill or a cut of the redeeming host'}; "
        f"users whose redemption a kill or a cut exposed: {len(reuse_allowed)}), other refusals {refused_other}; "
        f"issued tokens never served: {sum(unserved.values())} ({sum(unexplained_unserved.values())} for users neither "
        f"orphaned nor signed out)" + (" (strict: any reuse fails)" if strict else ""),
        ", ".join([f"user {u}: {n} reuse" + ("" if strict else " not explained by a kill or a cut")
                   for u, n in sorted(unexplained_reuse.items(), key=str)[:6]]
                  + [f"user {u}: {n} unserved" + (" (its host answered a store error while redeeming it)" if u in store_error_orphans else "")
                     for u, n in sorted(unexplained_unserved.items())[:6]])))

    # 3. Stale answers after a sign-out.
    bound = a["stale_bound"]
    stale = []
    worst_late, latest_after_ack, while_cut_off = 0.0, 0.0, 0
    not_removed = sum(1 for r in records if r["op"] == "sign-out" and r["status"] == 200 and r.get("removed") is False)
    for r in tokens:
        if r["status"] != 200:
            continue
        ops = [op for op in timeline.get(r["user"], []) if op["start"] < r["start"]]
        if not ops or ops[-1]["op"] != "sign-out" or ops[-1]["status"] != 200 or ops[-1]["end"] > r["start"]:
            continue
        acknowledged = ops[-1]["end"]
        # A request still under way when the user signed in again may rightly answer with the new sign-in's token (a
        # request begun 0.3 s before a sign-in and answered 0.1 s after it, on a loaded machine): not stale.
        if any(op["op"] == "sign-in" and op["status"] == 200 and acknowledged <= op["start"] < r["end"]
               for op in timeline.get(r["user"], [])):
            continue
        latest_after_ack = max(latest_after_ack, r["start"] - acknowledged)
        effective = acknowledged
        for w in host_windows(windows, r["host"]):
            if w["start"] < acknowledged + bound and w["end"] > acknowledged:
                effective = max(effective, w["end"] + a["reconnect"])
        late = r["start"] - effective
        if r["start"] > effective:
            worst_late = max(worst_late, late)
        if late > bound:
            stale.append(r)
        elif r["start"] - acknowledged > bound:
            while_cut_off += 1
    gates.append(Gate(
        "no stale answer", not stale,
        f"{len(stale)} answers 200 later than {bound} s after a sign-out (for a host cut off then: after its link was "
        f"back + {a['reconnect']} s); latest 200 begun after an acknowledged sign-out: {latest_after_ack:.2f} s after it; "
        f"{while_cut_off} answers 200 later than {bound} s by a host cut off then (its L1, allowed until its link is back + "
        f"{a['reconnect']} s + {bound} s)",
        ", ".join(f"user {r['user']} on host{r['host']} ({r.get('source')})" for r in stale[:6])
        + (f"; {not_removed} acknowledged sign-outs said they removed nothing" if not_removed else "")))

    # 4. Convergence after each outage, per host.
    convergence = {}
    for w in windows:
        if w["end"] == float("inf"):
            continue
        for h in w["hosts"]:
            after = [r for r in tokens if r["host"] == h and r["start"] >= w["end"]]
            first = next((r for r in sorted(after, key=lambda r: r["end"])
                          if r["status"] == 200 and r.get("source") != "l1"), None)
            key = f"{w['kind']}/host{h}"
            convergence[key] = (first["end"] - w["end"]) if first else float("inf")
    worst_convergence = max(convergence.values(), default=float("inf"))
    gates.append(Gate(
        "hosts converged", worst_convergence <= a["converge"] and bool(convergence),
        f"answers from the store again at most {worst_convergence:.2f} s after the server or link was back "
        f"(bound {a['converge']} s)",
        ", ".join(f"{k}: {v:.2f} s" for k, v in sorted(convergence.items()))))

    # 5. Answers during the outage and the cut-off.
    # Judged: the requests begun in a window, up to SLACK s before its end (one begun as the server comes back may be
    # held by what its return unblocks: a lease another host holds is waited for, up to the lease).
    in_window = []
    for w in windows:
        for r in tokens:
            if r["host"] in w["hosts"] and w["start"] <= r["start"] <= w["end"] - a["slack"]:
                in_window.append((w, r))
    served_l1 = sum(1 for _, r in in_window if r["status"] == 200)
    typed, untyped, slow, l1_missed = 0, [], [], []
    worst_error = 0.0
    orphan_401 = 0
    worst_caller = 0.0
    for w, r in in_window:
        if r["status"] == 200:
            continue
        if r["status"] == 401 and r["user"] in orphaned_users:
            orphan_401 += 1  # the user must sign in again: the chaos orphaned a rotation (gate 2)
            continue
        # The host's own time for the request (its `ms`): what its deadline bounds. The caller's time adds this
        # driver's own scheduling, which on a loaded machine is not the host's; it is reported beside.
        worst_caller = max(worst_caller, r["end"] - r["start"])
        duration = r["ms"] / 1000 if isinstance(r.get("ms"), (int, float)) else r["end"] - r["start"]
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
    l1_answers = sum(1 for _, r in in_window if r["status"] == 200 and r.get("source") == "l1")
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
        f"{len(in_window)} requests in the windows: {served_l1} served 200 ({l1_answers} from the L1), {typed} typed errors (slowest "
        f"{worst_error:.2f} s by the host, {worst_caller:.2f} s by the caller; bound {deadline_bound} s), {len(slow)} slower, "
        f"{len(untyped)} untyped, "
        f"{len(l1_missed)} not served although the host's L1 had answered the user"
        + (f"; {orphan_401} interaction required for users whose rotation the chaos orphaned" if orphan_401 else ""),
        ", ".join(f"host{r['host']} {r['status']} {r.get('error', '')} {r['end'] - r['start']:.2f} s"
                  for r in (untyped + slow + l1_missed)[:6])))

    # 6. No hangs.
    hangs = [r for r in records if r["status"] == "hang"]
    gates.append(Gate("no hangs", not hangs,
                      f"{len(hangs)} of {len(records)} requests ran into the caller's {a['hang']} s timeout"))

    # 7. The killed lease holder held the others up at most a lease.
    # The others were held up by the lease at most its duration: the next redemption of that user's token, by another
    # host, began within a lease (+ slack) of the killed holder's. A caller may wait longer only when that redemption
    # is refused (the killed holder's went through at the identity provider): the client then waits up to another
    # lease for the holder's rotation to be stored (TokenClient's awaitReplacement), so every request ends within
    # two leases + slack.
    if killed:
        held = [r for r in tokens if r["user"] == killed["user"] and r["host"] != killed["host"]
                and killed["t"] - a["lease"] <= r["start"] <= killed["restarted"] + a["lease"]]
        longest = max((r["end"] - r["start"] for r in held), default=0.0)
        since = killed.get("inflight_since") or killed["t"]
        # By any host, the restarted one too (a new process under the same name and address).
        takeover = min((x["since"] for x in inputs.redemptions if x["user"] == killed["user"] and x["since"] > since + 0.01),
                       default=None)
        held_by_lease = (takeover - since) if takeover is not None else float("inf")
        limit, longest_limit = a["lease"] + deadline_bound, 2 * a["lease"] + deadline_bound
        gates.append(Gate(
            "lease holder killed", held_by_lease <= limit and longest <= longest_limit,
            f"host{killed['host']} SIGKILLed redeeming; that user's token was redeemed again "
            f"{held_by_lease:.2f} s after it (bound: lease {a['lease']} s + {deadline_bound} s); {len(held)} other hosts' "
            f"requests for the user, longest {longest:.2f} s (bound {longest_limit} s)"))
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
    # A user whose rotation the chaos orphaned must sign in again (401): the identity provider took that token.
    orphan_errors = [r for r in calm if r["status"] == 401 and r["user"] in orphaned_users]
    typed_calm = [r for r in calm if (r["status"], r.get("error")) in ((503, "store_unavailable"), (502, "idp_unavailable"))]
    calm_errors = [r for r in calm if r["status"] != 200 and r not in orphan_errors and r not in typed_calm]
    # A typed error outside the windows is the deadline met on an overloaded machine (a store read slower than the
    # deadline): tolerated up to 1 % of the calm requests, counted either way.
    typed_limit = 0.01 * len(calm)
    gates.append(Gate(
        "calm answers", not calm_errors and len(typed_calm) <= typed_limit,
        f"{len(calm)} requests of signed-in users outside the windows: {len(calm_errors)} errors other than typed, "
        f"{len(typed_calm)} typed (store or identity provider unavailable; at most 1 % = {typed_limit:.0f} tolerated, "
        f"slowest {max((r['end'] - r['start'] for r in typed_calm), default=0):.2f} s)"
        + (f"; {len(orphan_errors)} interaction required for users whose rotation the chaos orphaned" if orphan_errors else ""),
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
        "machine": inputs.machine,
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
    if summary.get("machine"):
        lines.append(f"Machine: {summary['machine']}")
    return "\n".join(lines)
