# Baton's front door. `make demo` and `make test` work on a fresh Debian 12 machine:
# each installs the Debian packages it needs (only the missing ones) first.
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# Let ccache reuse objects across checkouts (CI builds a fresh clone): paths are made
# relative to the checkout and the working directory is left out of the hash.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
# Without these ccache refuses every compilation that uses a precompiled header.
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime

.PHONY: setup build release demo install deb test test-plain test-tsan bench bench-peers fuzz soak format clean

setup:
	@bash scripts/setup.sh

build: setup
	cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS) >/dev/null
	ninja -C build -j $(JOBS)

release: setup
	cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	ninja -C build-release -j $(JOBS) baton

# The main job a new user sees first: a model deployment pipeline with live progress.
demo: release
	./build-release/baton run examples/deploy-model.yaml --ephemeral \
	  --input model_id=llama-3-8b

# The Release build into $(DESTDIR)$(PREFIX): bin/baton, its man page, bash and zsh
# completions, systemd units for `baton server` and `baton worker@NAME`, the docs.
PREFIX ?= /usr/local
install: release
	ninja -C build-release baton_extras
	DESTDIR="$(DESTDIR)" cmake --install build-release --prefix "$(PREFIX)"

# The same as a Debian package: build-release/baton_VERSION_ARCH.deb (install it with
# `sudo apt install ./build-release/baton_*.deb`).
deb: release
	ninja -C build-release baton_extras
	cd build-release && cpack -G DEB

# A test still running after 10 minutes has hung (the slowest take about a minute under
# TSan): ctest fails it instead of waiting out its 25-minute default.
#
# Every test, under AddressSanitizer + UndefinedBehaviorSanitizer (the Debug build in
# build-asan/ is sanitized: one build serves both). The sanitizer builds start from
# nothing in CI, so they compile the modules in unity batches as Release does;
# `make build` keeps one object per file for quick incremental rebuilds. A batch of 32
# sources takes a compiler up to ~3 GB: with less memory, pass
# CMAKE_FLAGS=-DBATON_UNITY_BATCH_SIZE=8.
test:
	@bash scripts/setup.sh --browser
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DBATON_SANITIZE=address \
	  -DBATON_UNITY_BUILD=ON $(CMAKE_FLAGS) >/dev/null
	ninja -C build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure --timeout 600 -j $(JOBS)

# The same tests without sanitizers (faster to build; what `make build` makes).
test-plain: build
	@bash scripts/setup.sh --browser
	cd build && ctest --output-on-failure --timeout 600 -j $(JOBS)

test-tsan:
	@bash scripts/setup.sh --browser
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DBATON_SANITIZE=thread \
	  -DBATON_UNITY_BUILD=ON $(CMAKE_FLAGS) >/dev/null
	ninja -C build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --output-on-failure --timeout 600 -j $(JOBS)

bench: setup
	bash bench/run.sh

# Baton's server against BullMQ (Redis) and graphile-worker (PostgreSQL) on this machine,
# end to end, alternating rounds (bench/peers/README.md). PEERS_ARGS=--quick for a smoke run.
bench-peers: release
	bash bench/peers/setup.sh
	BATON=build-release/baton bash bench/peers/run.sh $(PEERS_ARGS)

# The libFuzzer targets (fuzz/), built with clang under ASan + UBSan, each run for
# FUZZ_SECONDS over its corpus; a crash fails and leaves its input in build-fuzz/artifacts.
FUZZ_SECONDS ?= 60
fuzz: setup
	FUZZ_REPLAY_ONLY="$(FUZZ_REPLAY_ONLY)" bash scripts/fuzz.sh $(FUZZ_SECONDS)

# The long variants CI has no time for: 60 crash-under-load rounds and the store-fault
# test under ASan, then 30 minutes of each fuzz target.
soak: setup
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DBATON_SANITIZE=address >/dev/null
	ninja -C build-asan -j $(JOBS) baton baton_integration_tests
	BATON_SOAK_ROUNDS=60 ./build-asan/tests/baton_integration_tests \
	  --gtest_filter='CrashLoad.*:ServerStoreFault.*:CrashTest.*'
	bash scripts/fuzz.sh 1800

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp')

clean:
	rm -rf build build-release build-asan build-tsan build-bench build-fuzz
