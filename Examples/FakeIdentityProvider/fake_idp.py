#!/usr/bin/env python3
"""A fake OAuth 2.0 / OpenID Connect token endpoint on loopback, for the example app's test.

It answers POST /token like Microsoft's identity platform: an authorization-code grant (code "demo") signs the demo
user in; a refresh-token grant redeems a refresh token it issued. Refresh tokens rotate strictly: a redeemed one is
refused afterwards (invalid_grant), as a server with replay detection does, so a client that redeems one token twice
is caught. Tokens expire after EXPIRES_IN seconds (302 by default: two seconds later a cache that wants 300 s of
validity left must refresh). Each redemption takes REDEEM_DELAY seconds, so concurrent clients overlap.

GET /stats returns {"sign_ins": n, "redemptions": n, "refused": n}; POST /revoke refuses every refresh token issued
so far. The first line on standard output is the port. Standard library only.
"""
import base64
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EXPIRES_IN = int(os.environ.get("EXPIRES_IN", "302"))
REDEEM_DELAY = float(os.environ.get("REDEEM_DELAY", "0.3"))
UID = "5a8c0b2e-4d61-4f0a-9e3b-7c2d1f0e9a18"
UTID = "72f988bf-86f1-41af-91ab-2d7cd011db47"
USERNAME = "ada@contoso.example"

lock = threading.Lock()
valid_refresh_tokens = set()
stats = {"sign_ins": 0, "redemptions": 0, "refused": 0}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def id_token(client_id: str) -> str:
    now = int(time.time())
    claims = {"aud": client_id, "iss": f"https://login.microsoftonline.com/{UTID}/v2.0", "iat": now, "nbf": now,
              "exp": now + 3600, "name": "Ada Lovelace", "preferred_username": USERNAME, "oid": UID, "sub": "demo-sub",
              "tid": UTID, "ver": "2.0"}
    header = {"alg": "none", "typ": "JWT"}
    return b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode()) + "."


def tokens(client_id: str, scope: str) -> dict:
    refresh_token = "rt-" + secrets.token_urlsafe(24)
    valid_refresh_tokens.add(refresh_token)
    return {"token_type": "Bearer", "scope": scope + " openid profile offline_access", "expires_in": EXPIRES_IN,
            "ext_expires_in": EXPIRES_IN, "access_token": "at-" + secrets.token_urlsafe(32), "refresh_token": refresh_token,
            "id_token": id_token(client_id),
            "client_info": b64url(json.dumps({"uid": UID, "utid": UTID}).encode())}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/stats":
            with lock:
                self.reply(200, dict(stats))
        else:
            self.reply(404, {"error": "not_found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        form = {k: v[0] for k, v in urllib.parse.parse_qs(self.rfile.read(length).decode()).items()}
        if self.path == "/revoke":
            with lock:
                valid_refresh_tokens.clear()
            self.reply(200, {})
            return
        if self.path != "/token":
            self.reply(404, {"error": "not_found"})
            return
        client_id, scope = form.get("client_id", ""), form.get("scope", "")
        grant = form.get("grant_type")
        if grant == "authorization_code" and form.get("code") == "demo":
            with lock:
                stats["sign_ins"] += 1
                self.reply(200, tokens(client_id, scope))
        elif grant == "refresh_token":
            time.sleep(REDEEM_DELAY)
            with lock:
                stats["redemptions"] += 1
                token = form.get("refresh_token", "")
                if token not in valid_refresh_tokens:
                    stats["refused"] += 1
                    self.reply(400, {"error": "invalid_grant", "error_description": "AADSTS70000: the refresh token was already used or revoked"})
                    return
                valid_refresh_tokens.discard(token)
                self.reply(200, tokens(client_id, scope))
        else:
            self.reply(400, {"error": "unsupported_grant_type"})


def main() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
