#!/usr/bin/env python3
"""A fake OAuth 2.0 / OpenID Connect token endpoint on loopback, for the example apps' tests.

It answers POST /token like Microsoft's identity platform. An authorization-code grant signs a user in: the code
"demo" signs in the demo user (Ada), the code "user-<N>" (N a non-negative integer) signs in user N, whose account
(uid and oid, username user<N>@contoso.example) is derived from N, in the same tenant as Ada. A refresh-token grant
redeems a refresh token it issued. Refresh tokens rotate strictly: a redeemed one is refused afterwards
(invalid_grant), as a server with replay detection does, and that redemption counts as a reuse, so a client, or a
farm of clients sharing one store, that redeems one token twice is caught. Tokens expire after EXPIRES_IN seconds
(302 by default: two seconds later a cache that wants 300 s of validity left must refresh). Each redemption takes
REDEEM_DELAY seconds (0.3 by default), so concurrent clients overlap.

Endpoints besides /token, none of them part of a real provider:
- GET /stats: {"sign_ins", "redemptions" (refresh grants, refused ones included), "refused" (every refused
  redemption: a reuse, a revoked or an unknown token), "reuse" (redemptions of a token already redeemed),
  "rotations_by_user" ({user: successful redemptions}, users as strings: "<N>", or "demo" for Ada), "reuses" (one
  {"user", "peer", "at"} per reuse, in order: whose token was redeemed again, by which client address, when)}.
- GET /inflight: the redemptions in progress, [{"peer": client IP, "user": N (or "demo", or null for a token it
  never issued), "since": Unix seconds, "host": the X-Client-Host header or null, "pid": the X-Client-Pid header as
  a number or null}]. The two headers are how a client on the same address as others says which one it is.
- GET /issued?user=N: the SHA-256 fingerprints (first 16 hex digits) of the access tokens issued to user N (or
  "demo"), in issue order: a test can tell which of them a client served without seeing a token.
- POST /revoke: refuses every refresh token issued so far (counted as refused, not as reuse).

BIND (127.0.0.1 by default) and PORT (0 by default: any free one) say where it listens; the first line on standard
output is the port. Standard library only.
"""
import base64
import hashlib
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EXPIRES_IN = int(os.environ.get("EXPIRES_IN", "302"))
REDEEM_DELAY = float(os.environ.get("REDEEM_DELAY", "0.3"))
UTID = "72f988bf-86f1-41af-91ab-2d7cd011db47"
DEMO_USER = "demo"
DEMO_UID = "5a8c0b2e-4d61-4f0a-9e3b-7c2d1f0e9a18"
# The namespace user N's uid is derived in (uuid5), so that every run gives user N the same account.
USER_NAMESPACE = uuid.UUID("0f3b5a52-8d7e-4c1a-9b6f-2e4d8c7a1b90")

lock = threading.Lock()
# Refresh token -> (user, state): "valid" until redeemed ("redeemed") or revoked ("revoked").
refresh_tokens = {}
# User -> fingerprints of the access tokens issued to them, in issue order.
issued = {}
# Redemption id -> what GET /inflight shows of it.
inflight = {}
stats = {"sign_ins": 0, "redemptions": 0, "refused": 0, "reuse": 0}
rotations_by_user = {}
reuses = []


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def fingerprint(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def profile(user: str) -> dict:
    """The account of user "demo" or "<N>": uid, display name and username."""
    if user == DEMO_USER:
        return {"uid": DEMO_UID, "name": "Ada Lovelace", "username": "ada@contoso.example", "sub": "demo-sub"}
    return {"uid": str(uuid.uuid5(USER_NAMESPACE, user)), "name": f"User {user}", "username": f"user{user}@contoso.example",
            "sub": f"user-{user}-sub"}


def id_token(client_id: str, user: str) -> str:
    now = int(time.time())
    account = profile(user)
    claims = {"aud": client_id, "iss": f"https://login.microsoftonline.com/{UTID}/v2.0", "iat": now, "nbf": now,
              "exp": now + 3600, "name": account["name"], "preferred_username": account["username"], "oid": account["uid"],
              "sub": account["sub"], "tid": UTID, "ver": "2.0"}
    header = {"alg": "none", "typ": "JWT"}
    return b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode()) + "."


def tokens(client_id: str, scope: str, user: str) -> dict:
    """A new token response for `user`; the caller holds the lock."""
    refresh_token = "rt-" + secrets.token_urlsafe(24)
    refresh_tokens[refresh_token] = (user, "valid")
    access_token = "at-" + secrets.token_urlsafe(32)
    issued.setdefault(user, []).append(fingerprint(access_token))
    return {"token_type": "Bearer", "scope": scope + " openid profile offline_access", "expires_in": EXPIRES_IN,
            "ext_expires_in": EXPIRES_IN, "access_token": access_token, "refresh_token": refresh_token,
            "id_token": id_token(client_id, user),
            "client_info": b64url(json.dumps({"uid": profile(user)["uid"], "utid": UTID}).encode())}


def user_of_code(code: str):
    """The user an authorization code signs in, or None."""
    if code == DEMO_USER:
        return DEMO_USER
    if code.startswith("user-") and code[5:].isdigit() and code[5:].isascii():
        return str(int(code[5:]))
    return None


def user_for_json(user):
    return user if user is None or user == DEMO_USER else int(user)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status: int, body) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        with lock:
            if url.path == "/stats":
                status, body = 200, dict(stats, rotations_by_user=dict(rotations_by_user), reuses=list(reuses))
            elif url.path == "/inflight":
                status, body = 200, sorted((dict(entry) for entry in inflight.values()), key=lambda entry: entry["since"])
            elif url.path == "/issued":
                user = query.get("user", [""])[0]
                status, body = 200, list(issued.get(user if user == DEMO_USER else user.lstrip("0") or "0", []))
            else:
                status, body = 404, {"error": "not_found"}
        self.reply(status, body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        form = {k: v[0] for k, v in urllib.parse.parse_qs(self.rfile.read(length).decode()).items()}
        if self.path == "/revoke":
            with lock:
                for token, (user, state) in refresh_tokens.items():
                    if state == "valid":
                        refresh_tokens[token] = (user, "revoked")
            self.reply(200, {})
            return
        if self.path != "/token":
            self.reply(404, {"error": "not_found"})
            return
        client_id, scope = form.get("client_id", ""), form.get("scope", "")
        grant = form.get("grant_type")
        if grant == "authorization_code" and user_of_code(form.get("code", "")) is not None:
            with lock:
                stats["sign_ins"] += 1
                response = tokens(client_id, scope, user_of_code(form["code"]))
            self.reply(200, response)
        elif grant == "refresh_token":
            self.redeem(form.get("refresh_token", ""), client_id, scope)
        else:
            self.reply(400, {"error": "unsupported_grant_type"})

    def redeem(self, token: str, client_id: str, scope: str) -> None:
        redemption = object()
        with lock:
            user = refresh_tokens.get(token, (None, None))[0]
            pid = self.headers.get("X-Client-Pid", "")
            inflight[redemption] = {"peer": self.client_address[0], "user": user_for_json(user), "since": time.time(),
                                    "host": self.headers.get("X-Client-Host"), "pid": int(pid) if pid.isdigit() else None}
        try:
            time.sleep(REDEEM_DELAY)
        finally:
            with lock:
                del inflight[redemption]
        with lock:
            stats["redemptions"] += 1
            user, state = refresh_tokens.get(token, (None, None))
            if state == "valid":
                refresh_tokens[token] = (user, "redeemed")
                rotations_by_user[user] = rotations_by_user.get(user, 0) + 1
                response = tokens(client_id, scope, user)
            else:
                response = None
                stats["refused"] += 1
                if state == "redeemed":
                    stats["reuse"] += 1
                    reuses.append({"user": user_for_json(user), "peer": self.client_address[0], "at": time.time()})
        if response is None:
            self.reply(400, {"error": "invalid_grant", "error_description": "AADSTS70000: the refresh token was already used or revoked"})
        else:
            self.reply(200, response)


class Server(ThreadingHTTPServer):
    # Three web hosts with many concurrent requests each connect at once.
    request_queue_size = 256
    daemon_threads = True


def main() -> int:
    server = Server((os.environ.get("BIND", "127.0.0.1"), int(os.environ.get("PORT", "0"))), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
