#!/usr/bin/env bash
# The farm example: three token-cache-web hosts on loopback share one store on a private, temporary PostgreSQL
# cluster (../Scripts/with-postgresql) and one fake identity provider; FarmExample/drive_farm.py signs users in,
# asks every host for their tokens for FARM_DURATION seconds (20 by default), signs one user out through one host and
# checks that the others stop serving it within FARM_SIGN_OUT_BOUND seconds (1 by default), then prints what each
# host did and what the identity provider saw. Exits non-zero if a refresh token was redeemed twice, a host answered
# for a signed-out user after the bound, or anything else failed.
set -euo pipefail
cd "$(dirname "$0")"
command -v python3 >/dev/null || { echo "run-farm-example: python3 is needed for the fake identity provider" >&2; exit 1; }

if [ "${1:-}" != --with-store ]; then
    swift build -q
    exec ../Scripts/with-postgresql "$PWD/run-farm-example.sh" --with-store
fi

# From here on, under with-postgresql: TOKEN_CACHE_TEST_POSTGRESQL is the cluster's URL (over its Unix socket).
: "${TOKEN_CACHE_TEST_POSTGRESQL:?run-farm-example: no PostgreSQL cluster}"
bin="$(swift build --show-bin-path)"
work="$(mktemp -d)"
pids=()
stop_all() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    # Each gets 5 s to stop, then is killed.
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap stop_all EXIT

# Waits up to $3 seconds for file $1 to hold a first line; prints the line's last word (a port).
first_line_port() {
    local _
    for _ in $(seq $(($3 * 10))); do
        if [ -s "$1" ] && [ "$(wc -l < "$1")" -ge 1 ]; then head -1 "$1" | awk '{print $NF}'; return 0; fi
        kill -0 "$2" 2>/dev/null || break
        sleep 0.1
    done
    return 1
}

# Tokens live 305 s: 5 s after each refresh, the cache (which wants 300 s left) refreshes again. A redemption takes
# half a second, so that hosts asking for one user at once overlap.
EXPIRES_IN=305 REDEEM_DELAY=0.5 python3 FakeIdentityProvider/fake_idp.py > "$work/idp.out" &
pids+=($!)
idp_port="$(first_line_port "$work/idp.out" $! 10)" || { echo "run-farm-example: the fake identity provider did not start" >&2; exit 1; }
idp="http://127.0.0.1:$idp_port"

# One key for every host of the store, made before they start.
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600); os.write(fd, os.urandom(32)); os.fsync(fd); os.close(fd)' "$work/key"

hosts=()
for name in web-1 web-2 web-3; do
    "$bin/token-cache-web" --store "$TOKEN_CACHE_TEST_POSTGRESQL" --key-file "$work/key" --idp "$idp" --name "$name" \
        > "$work/$name.out" 2> "$work/$name.err" &
    pids+=($!)
    port="$(first_line_port "$work/$name.out" $! 30)" || {
        echo "run-farm-example: $name did not start:" >&2
        tail -5 "$work/$name.err" >&2
        exit 1
    }
    hosts+=(--host "$name=http://127.0.0.1:$port")
done
echo "three hosts share a store on PostgreSQL; identity provider on port $idp_port"

timeout 300 python3 FarmExample/drive_farm.py --idp "$idp" "${hosts[@]}" --duration "${FARM_DURATION:-20}" --sign-out-bound "${FARM_SIGN_OUT_BOUND:-1}"
