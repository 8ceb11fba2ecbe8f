# The two commands a new user runs are `make demo` and `make test` (see README.md).
SHELL := /bin/bash
DEBIAN_PACKAGES := liblmdb-dev libsodium-dev pkg-config
DEMO_DIR := $(CURDIR)/.demo

.PHONY: farm postgresql-shell bench-shared bench-shared-large example deps build release demo test stress sanitize clean install uninstall install-check interop interop-venv interop-generate compare compare-venv compare-selftest instructions

# Installs the Debian packages that are missing (as root directly, otherwise through sudo).
deps:
	@missing=""; for package in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi

build: deps
	swift build

release: deps
	swift build -c release

# Builds in release mode, creates a demo store with realistic sample data in .demo/, and inspects it.
demo: release
	@bin="$$(swift build -c release --show-bin-path)/cachetool"; \
	rm -rf "$(DEMO_DIR)"; \
	export TOKEN_CACHE_DIR="$(DEMO_DIR)/store" TOKEN_CACHE_KEY_FILE="$(DEMO_DIR)/key"; \
	set -e; \
	echo "\$$ cachetool init"; "$$bin" init; echo; \
	echo "\$$ cachetool sample-data"; "$$bin" sample-data; echo; \
	echo "\$$ cachetool inspect"; "$$bin" inspect; echo; \
	echo "\$$ cachetool info"; "$$bin" info; echo; \
	if command -v cachetool >/dev/null 2>&1; then tool=cachetool; else tool=.build/release/cachetool; fi; \
	echo "Demo store: $(DEMO_DIR)/store (key $(DEMO_DIR)/key). Try:"; \
	echo "  export TOKEN_CACHE_DIR=$(DEMO_DIR)/store TOKEN_CACHE_KEY_FILE=$(DEMO_DIR)/key"; \
	echo "  $$tool inspect --summary"; \
	echo "  $$tool inspect --expiring-within 1h"; \
	echo "  $$tool inspect --json"; \
	if [ "$$tool" != cachetool ]; then echo "(\`sudo make install\` puts cachetool on your PATH, with its man page and completions.)"; fi

# Runs every test of the package (unit, format vectors, crash/child-process and CLI tests), then the MSAL Python
# interop proof (below), which needs PyPI the first time. The tests run with a private temporary PostgreSQL cluster
# (Scripts/with-postgresql: Debian's postgresql installed when missing, the cluster removed afterwards), on which
# the shared store's suites and the domain suites run as on the other backends (with a TLS listener on loopback, for
# the suite that connects with sslmode=verify-full against a certificate made for the run).
test: deps
	swift build --build-tests
	WITH_POSTGRESQL_TLS=1 Scripts/with-postgresql swift test --skip-build
	@$(MAKE) --no-print-directory interop
	@$(MAKE) --no-print-directory install-check
	@$(MAKE) --no-print-directory example

# A shell with a private temporary PostgreSQL cluster up (its URL in TOKEN_CACHE_TEST_POSTGRESQL), removed on exit:
# for running the shared store's tests or cachetool against a server by hand.
postgresql-shell:
	Scripts/with-postgresql bash

# The examples (their own package in Examples/, see Examples/README.md): the walkthrough signs in against a fake
# identity provider on loopback and walks through the silent flow, two processes refreshing at once, a change
# notification and interaction required; the farm example runs three token-cache-web hosts on one private PostgreSQL
# and counts hits, redemptions and stale answers per host.
example: deps
	Examples/run-example.sh
	Examples/run-farm-example.sh

# Installs cachetool, its man page and its bash, zsh and fish completions under $(DESTDIR)$(PREFIX).
# The man page comes from swift-argument-parser's generate-manual plugin, the completions from the tool itself.
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_CONFIGURATION ?= release
INSTALL_ROOT = $(DESTDIR)$(PREFIX)
install: deps
	swift build -c $(INSTALL_CONFIGURATION) --product cachetool
	swift package --disable-sandbox generate-manual --configuration $(INSTALL_CONFIGURATION) >/dev/null
	@set -e; bin="$$(swift build -c $(INSTALL_CONFIGURATION) --show-bin-path)/cachetool"; \
	install -d "$(INSTALL_ROOT)/bin" "$(INSTALL_ROOT)/share/man/man1" "$(INSTALL_ROOT)/share/bash-completion/completions" \
	  "$(INSTALL_ROOT)/share/zsh/site-functions" "$(INSTALL_ROOT)/share/fish/vendor_completions.d"; \
	install -m 0755 "$$bin" "$(INSTALL_ROOT)/bin/cachetool"; \
	install -m 0644 .build/plugins/GenerateManual/outputs/cachetool/cachetool.1 "$(INSTALL_ROOT)/share/man/man1/cachetool.1"; \
	"$$bin" --generate-completion-script bash > "$(INSTALL_ROOT)/share/bash-completion/completions/cachetool"; \
	"$$bin" --generate-completion-script zsh > "$(INSTALL_ROOT)/share/zsh/site-functions/_cachetool"; \
	"$$bin" --generate-completion-script fish > "$(INSTALL_ROOT)/share/fish/vendor_completions.d/cachetool.fish"; \
	echo "installed cachetool, its man page and completions under $(INSTALL_ROOT)"

uninstall:
	rm -f "$(INSTALL_ROOT)/bin/cachetool" "$(INSTALL_ROOT)/share/man/man1/cachetool.1" \
	  "$(INSTALL_ROOT)/share/bash-completion/completions/cachetool" "$(INSTALL_ROOT)/share/zsh/site-functions/_cachetool" \
	  "$(INSTALL_ROOT)/share/fish/vendor_completions.d/cachetool.fish"

# `make install` into a temporary root (the debug build `make test` already has), then checks what it put there and
# that `make uninstall` takes it away again.
install-check:
	@set -e; root="$$(mktemp -d)"; trap 'rm -rf "$$root"' EXIT; \
	$(MAKE) --no-print-directory install DESTDIR="$$root" PREFIX=/usr INSTALL_CONFIGURATION=debug >/dev/null; \
	"$$root/usr/bin/cachetool" --version | grep -q '^cachetool '; \
	grep -q '^\.Nm cachetool' "$$root/usr/share/man/man1/cachetool.1"; \
	grep -q 'lookup' "$$root/usr/share/man/man1/cachetool.1"; \
	grep -q '_cachetool' "$$root/usr/share/bash-completion/completions/cachetool"; \
	grep -q '^#compdef cachetool' "$$root/usr/share/zsh/site-functions/_cachetool"; \
	grep -q "complete -c 'cachetool'" "$$root/usr/share/fish/vendor_completions.d/cachetool.fish"; \
	$(MAKE) --no-print-directory uninstall DESTDIR="$$root" PREFIX=/usr >/dev/null; \
	test -z "$$(find "$$root" -type f)"; \
	echo "install-check: ok (binary, man page, bash/zsh/fish completions; uninstall removes them)"

# Kill storm: writers SIGKILLed at random while ingesting; every acknowledged write is then checked.
# Tamper sweep: one bit flipped per copy of a store's data file; verify and inspect must give a verdict, never crash
# or show a secret that was not stored.
# Inspect memory: `inspect` (table, JSON, summary), `stats`, a purge dry run, `verify`, a data-key rotation and a
# cap's eviction on a store of INSPECT_TOKENS access tokens each stay under 64 MiB.
# Pause storm: a random cachetool is stopped with SIGSTOP (lock holders often, some far past the lock bound); every
# other run must finish or fail with 75 within the bound, and every acknowledged write must be kept.
# Long runs: `make stress STRESS_SECONDS=1800 TAMPER_FLIPS=all`; CI runs short ones.
STRESS_SECONDS ?= 60
PAUSE_SECONDS ?= 30
STRESS_WRITERS ?= 6
TAMPER_FLIPS ?= 300
INSPECT_TOKENS ?= 1000000
stress: release
	@bin="$$(swift build -c release --show-bin-path)/cachetool"; \
	python3 Tests/Stress/kill_storm.py --cachetool "$$bin" --seconds $(STRESS_SECONDS) --writers $(STRESS_WRITERS) && \
	python3 Tests/Stress/pause_storm.py --cachetool "$$bin" --seconds $(PAUSE_SECONDS) && \
	python3 Tests/Stress/tamper_sweep.py --cachetool "$$bin" --flips $(TAMPER_FLIPS) && \
	python3 Tests/Stress/inspect_memory.py --cachetool "$$bin" --tokens $(INSPECT_TOKENS)

# Farm test (Tests/Farm/farm.py): four token-cache-web hosts of the Examples package, each in a network namespace of
# its own, share one private PostgreSQL while the server is stopped (pg_ctl stop -m immediate), one host is cut off
# and a host SIGKILLed while it holds a refresh lease; hard gates on lost writes, reuse at the identity provider,
# stale answers, convergence, typed errors within the deadline and hangs. Needs root for the namespaces (otherwise,
# or when `ip netns` fails, loopback with proxies that can be cut; the summary says which). About 2.5 minutes after
# the debug build of the Examples package. Findings (request log, summary, every process's log) go to
# .build/farm/run-*; the path is printed.
#   make farm FARM_SECONDS=300      a longer calm tail (the chaos takes the first ~85 s)
#   make farm FARM_ARGS="--mode proxy --seed 7"
FARM_SECONDS ?= 110
FARM_ARGS ?=
farm: deps
	cd Examples && swift build --product token-cache-web
	python3 Tests/Farm/farm.py --host-binary "$$(cd Examples && swift build --show-bin-path)/token-cache-web" \
	  --seconds $(FARM_SECONDS) $(FARM_ARGS)

# Sanitizers, each in its own build folder: every test under AddressSanitizer (cachetool, which the CLI tests run,
# is built with it too), then the concurrency tests under ThreadSanitizer. Not part of CI: see README for its cost.
# verify_asan_link_order=0: one test preloads a small shim into cachetool, which ASan would otherwise refuse.
# handle_*=0: tests crash cachetool on purpose (damaged pages, signals) and check its own crash handling.
# detect_leaks=0: LeakSanitizer reports one 32-byte allocation the runtime keeps for the life of the process.
SANITIZE_ASAN_OPTIONS := verify_asan_link_order=0:detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigill=0:handle_sigfpe=0
sanitize: deps
	swift build --build-tests --sanitize=address --scratch-path .build-asan
	ASAN_OPTIONS=$(SANITIZE_ASAN_OPTIONS) swift test --skip-build --sanitize=address --scratch-path .build-asan
	swift build --build-tests --sanitize=thread --scratch-path .build-tsan
	TSAN_OPTIONS="suppressions=$(CURDIR)/Tests/Sanitizers/tsan.supp" \
	  swift test --skip-build --sanitize=thread --scratch-path .build-tsan --filter "ConcurrencyTests|TransactionTests|RegistryTests|TransactionGateTests"

# MSAL Python interop proof (Tests/Interop): MSAL Python 1.39.0 writes token caches and answers silent requests
# against them; `cachetool import` must give the same answers (or, for marked queries, the rule Docs/Semantics.md
# documents), and `cachetool export` must give a file MSAL reads back. Part of `make test`.
# The virtual environment installs the exact pins of Tests/Interop/requirements.txt once (stamp file); it needs PyPI.
INTEROP_PYTHON ?= python3.11
INTEROP_VENV := $(CURDIR)/.venv/interop
INTEROP_REQUIREMENTS := Tests/Interop/requirements.txt
INTEROP_WORK := $(CURDIR)/.build/interop

$(INTEROP_VENV)/.installed: $(INTEROP_REQUIREMENTS)
	@command -v $(INTEROP_PYTHON) >/dev/null || { echo "interop: $(INTEROP_PYTHON) not found (set INTEROP_PYTHON to a Python 3.11 interpreter)" >&2; exit 1; }
	@rm -rf "$(INTEROP_VENV)"
	@$(INTEROP_PYTHON) -m venv "$(INTEROP_VENV)" || { echo "interop: '$(INTEROP_PYTHON) -m venv' failed (on Debian: apt-get install python3-venv)" >&2; exit 1; }
	@echo "Installing the pinned MSAL Python packages into $(INTEROP_VENV)"
	@if ! "$(INTEROP_VENV)/bin/pip" install --disable-pip-version-check --quiet --timeout 20 --retries 2 	    --no-deps -r $(INTEROP_REQUIREMENTS); then 	  echo "interop: cannot install the pinned packages of $(INTEROP_REQUIREMENTS) (msal==1.39.0 and its dependencies)." >&2; 	  echo "interop: PyPI is unreachable or a pinned version is unavailable (pip's error is above); the MSAL interop proof needs them and was NOT run." >&2; 	  rm -rf "$(INTEROP_VENV)"; exit 1; 	fi
	@"$(INTEROP_VENV)/bin/pip" check --disable-pip-version-check >/dev/null || { 	  "$(INTEROP_VENV)/bin/pip" check; echo "interop: $(INTEROP_REQUIREMENTS) does not pin every dependency" >&2; rm -rf "$(INTEROP_VENV)"; exit 1; }
	@touch "$@"

interop-venv: $(INTEROP_VENV)/.installed

# What can be checked without cachetool import/export: the generator runs, is deterministic, covers every kind.
interop-generate: interop-venv
	"$(INTEROP_VENV)/bin/python" Tests/Interop/msal_caches.py --out "$(INTEROP_WORK)/generated" --check

# The whole proof against a debug build of cachetool; closes with "N passed, N failed".
interop: build interop-venv
	"$(INTEROP_VENV)/bin/python" Tests/Interop/msal_proof.py --cachetool "$$(swift build --show-bin-path)/cachetool" --work "$(INTEROP_WORK)"

# Side-by-side benchmark against MSAL Python and msal-extensions (Benchmarks/compare/compare.py): the same seeded
# population (as an MSAL JSON cache) at each size in COMPARE_SIZES, measured in one run; writes
# Benchmarks/results/compare.md, .json and .png. About 4 minutes at 1k/10k/100k on a 2-core VM. Not part of `make test`.
# COMPARE_TC_ONLY_SIZES (e.g. 1000000) adds sizes for token-cache alone (MSAL Python would take too long there).
# Exit code 3 when this cachetool has no `bench` subcommand (in-process token-cache figures missing), unless
# COMPARE_ALLOW_PARTIAL=1. Its own virtual environment, from the exact pins of Benchmarks/compare/requirements.txt.
COMPARE_SIZES ?= 1000 10000 100000
COMPARE_TC_ONLY_SIZES ?=
COMPARE_ALLOW_PARTIAL ?= 0
COMPARE_VENV := $(CURDIR)/.venv/compare
COMPARE_REQUIREMENTS := Benchmarks/compare/requirements.txt

$(COMPARE_VENV)/.installed: $(COMPARE_REQUIREMENTS)
	@command -v $(INTEROP_PYTHON) >/dev/null || { echo "compare: $(INTEROP_PYTHON) not found (set INTEROP_PYTHON to a Python 3.11 interpreter)" >&2; exit 1; }
	@rm -rf "$(COMPARE_VENV)"
	@$(INTEROP_PYTHON) -m venv "$(COMPARE_VENV)" || { echo "compare: '$(INTEROP_PYTHON) -m venv' failed (on Debian: apt-get install python3-venv)" >&2; exit 1; }
	@echo "Installing the pinned packages of $(COMPARE_REQUIREMENTS) into $(COMPARE_VENV)"
	@if ! "$(COMPARE_VENV)/bin/pip" install --disable-pip-version-check --quiet --timeout 20 --retries 2 \
	    --no-deps -r $(COMPARE_REQUIREMENTS); then \
	  echo "compare: cannot install the pinned packages of $(COMPARE_REQUIREMENTS) (msal, msal-extensions, matplotlib and their dependencies) from PyPI." >&2; \
	  echo "compare: PyPI is unreachable or a pinned version is unavailable (pip's error is above); the comparison was NOT run." >&2; \
	  rm -rf "$(COMPARE_VENV)"; exit 1; \
	fi
	@"$(COMPARE_VENV)/bin/pip" check --disable-pip-version-check >/dev/null || { \
	  "$(COMPARE_VENV)/bin/pip" check; echo "compare: $(COMPARE_REQUIREMENTS) does not pin every dependency" >&2; rm -rf "$(COMPARE_VENV)"; exit 1; }
	@touch "$@"

compare-venv: $(COMPARE_VENV)/.installed

compare: release compare-venv
	"$(COMPARE_VENV)/bin/python" Benchmarks/compare/compare.py --cachetool "$$(swift build -c release --show-bin-path)/cachetool" \
	  --sizes "$(COMPARE_SIZES)" --tc-only-sizes "$(COMPARE_TC_ONLY_SIZES)" $(if $(filter 1,$(COMPARE_ALLOW_PARTIAL)),--allow-missing-bench)

# A few seconds: a 100-token quick run into a temporary folder; checks the JSON, Markdown and PNG it writes.
compare-selftest: release compare-venv
	"$(COMPARE_VENV)/bin/python" Benchmarks/compare/compare.py --cachetool "$$(swift build -c release --show-bin-path)/cachetool" --self-test

# The shared store on PostgreSQL side by side with one blob per user (Microsoft.Identity.Web's distributed cache
# design) on the same private server, in one run (Benchmarks/SharedStore; Benchmarks/README.md, "The shared store
# on PostgreSQL"): lookups (1 and BENCH_SHARED_HOSTS callers), durable writes, BENCH_SHARED_HOSTS host processes on a
# mix, lost updates of concurrent writers to one user, sizes on the server. Scripts/with-postgresql starts the server
# with TCP on loopback too (the headline transport). Prints the tables and writes Benchmarks/results/shared-store.json
# and .md, keeping the sizes of the results already there that `make bench-shared-large` measured (each names its own
# run). About 5 minutes at the default sizes on a 2-core VM, after the release build of the driver (several minutes
# the first time). Not part of `make test`.
#   make bench-shared BENCH_SHARED_SIZES=10000           one size
#   make bench-shared BENCH_SHARED_MIX_SECONDS=60 BENCH_SHARED_LOOKUPS=50000 BENCH_SHARED_WRITES=5000   longer
BENCH_SHARED_SIZES ?= 10000 100000
BENCH_SHARED_LOOKUPS ?= 5000
BENCH_SHARED_WRITES ?= 500
BENCH_SHARED_THROUGHPUT_SECONDS ?= 4
BENCH_SHARED_MIX_SECONDS ?= 10
BENCH_SHARED_LOST_WRITES ?= 25
BENCH_SHARED_HOSTS ?= 4
bench-shared: deps
	cd Benchmarks/SharedStore && swift build -c release
	WITH_POSTGRESQL_TCP=1 Scripts/with-postgresql "$$(cd Benchmarks/SharedStore && swift build -c release --show-bin-path)/SharedStoreBench" \
	  --sizes "$(BENCH_SHARED_SIZES)" --lookups $(BENCH_SHARED_LOOKUPS) --writes $(BENCH_SHARED_WRITES) \
	  --throughput-seconds $(BENCH_SHARED_THROUGHPUT_SECONDS) --mix-seconds $(BENCH_SHARED_MIX_SECONDS) \
	  --lost-writes $(BENCH_SHARED_LOST_WRITES) --hosts $(BENCH_SHARED_HOSTS) \
	  --merge Benchmarks/results/shared-store.json \
	  --output Benchmarks/results/shared-store.json --markdown Benchmarks/results/shared-store.md

# The shared store at BENCH_SHARED_LARGE_SIZES access tokens (default a million), for the size gate only: the
# population of both designs, their table + TOAST + index sizes against the population as MSAL JSON (summed over
# the users' exports), and the lookups (BENCH_SHARED_LOOKUPS timed, then 1 and BENCH_SHARED_HOSTS callers), over TCP
# on loopback. The writes, host processes, lost updates and notification figures are left to `make bench-shared`.
# The sizes are added to Benchmarks/results/shared-store.json and .md, whose other sizes are kept as they are.
# About 25 minutes at a million on a shared 2-core VM (16 min the shared store's bulk load, 6 min the one-blob table),
# and about 15 GB free on the temporary directory's disk (the cluster, and a local store the one-blob table is
# exported from).
#   make bench-shared-large BENCH_SHARED_LARGE_SIZES=300000
BENCH_SHARED_LARGE_SIZES ?= 1000000
bench-shared-large: deps
	cd Benchmarks/SharedStore && swift build -c release
	WITH_POSTGRESQL_TCP=1 Scripts/with-postgresql "$$(cd Benchmarks/SharedStore && swift build -c release --show-bin-path)/SharedStoreBench" \
	  --sizes "" --large-sizes "$(BENCH_SHARED_LARGE_SIZES)" --lookups $(BENCH_SHARED_LOOKUPS) \
	  --throughput-seconds $(BENCH_SHARED_THROUGHPUT_SECONDS) --hosts $(BENCH_SHARED_HOSTS) \
	  --merge Benchmarks/results/shared-store.json \
	  --output Benchmarks/results/shared-store.json --markdown Benchmarks/results/shared-store.md

# Instruction counts per operation under callgrind (Benchmarks/Instructions; README "Instruction counts"): the guard a
# refactor is measured by. On a store of INSTRUCTIONS_TOKENS synthetic access tokens (populated natively, outside
# valgrind), per operation (a one-token-bucket hit, a uniform-draw hit, a miss, a hit + its companions, an ingest of
# a refresh-grant response):
#   Ir/op       user-space instructions; the kernel's work (an ingest's fsync) is not an instruction of the process
#   mallocs/op  calls into the C allocator (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign)
#   refcount/op calls into swift_retain / swift_release and their variants (bridgeObject, _n, unknownObject, unowned)
# each (count after n2 operations − count after n1) / (n2 − n1). `make instructions BASE=<git rev>` also builds the
# same driver against <rev> in a temporary git worktree, measures both trees alternating A, B, A, B over
# INSTRUCTIONS_ROUNDS rounds, and prints the medians with Δ = (A − B) / B. The counts are deterministic on one store
# (0 % between rounds), and both trees measure one population: a Δ of identical code is 0.00 %, so a Δ that is
# not 0 is the code's; ±2 % on a hit is a real change. Two runs (two populations, two layouts) differ at 100k by
# under 0.01 % for the hits and up to 0.2 % for a miss or an ingest.
# About 1.5 min at 100k with the drivers built, plus 1.5–3 min per cold release build of the library. The JSON is
# .build/instructions/results.json; the last round's callgrind dumps stay in .build/instructions/{A,B}/callgrind.
# Smoke run: make instructions INSTRUCTIONS_TOKENS=2000 INSTRUCTIONS_ROUNDS=1
INSTRUCTIONS_TOKENS ?= 100000
INSTRUCTIONS_ROUNDS ?= 2
BASE ?=
instructions:
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(DEBIAN_PACKAGES) valgrind binutils"
	python3 Benchmarks/Instructions/instructions.py --tokens $(INSTRUCTIONS_TOKENS) --rounds $(INSTRUCTIONS_ROUNDS) $(if $(BASE),--base $(BASE))

clean:
	rm -rf .build .build-asan .build-tsan "$(DEMO_DIR)"
