#!/usr/bin/env bash
# Builds the example app, starts the fake identity provider on loopback, runs the walkthrough and checks its output.
set -euo pipefail
cd "$(dirname "$0")"
command -v python3 >/dev/null || { echo "run-example: python3 is needed for the fake identity provider" >&2; exit 1; }
swift build -q
work="$(mktemp -d)"
# A redemption takes a second, so that the two processes of step 4 overlap even on a loaded machine.
REDEEM_DELAY=1 python3 FakeIdentityProvider/fake_idp.py > "$work/port" &
provider=$!
trap 'kill $provider 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port="$(head -1 "$work/port")"
[ -n "$port" ] || { echo "run-example: the fake identity provider did not start" >&2; exit 1; }
"$(swift build --show-bin-path)/token-cache-demo" walkthrough "http://127.0.0.1:$port" "$work/demo" | tee "$work/out"
expect() { grep -qF -- "$1" "$work/out" || { echo "run-example: expected \"$1\" in the walkthrough's output" >&2; exit 1; }; }
expect "signed in as Ada Lovelace <ada@contoso.example>"
expect "token from the cache"
expect "token from the cache (the in-process L1)"
expect "token refreshed (the refresh token was redeemed and rotated)"
expect "token refreshed by another process (this one waited for its refresh lease)"
expect "the identity provider redeemed 1 refresh token for the two"
expect "this one heard: account removed: ada@contoso.example"
expect "interaction required: sign ada@contoso.example in again"
# Three redemptions (steps 3, 4 and 6), only the revoked one refused: no process ever redeemed a token twice.
expect "identity provider: 2 sign-ins, 3 redemptions, 1 refused"
echo "run-example: all flows behaved"
