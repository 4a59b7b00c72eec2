# ember — the two commands of the README, and a few more for developers.
#   make run             install what is missing, build, run the main job
#   make test            install what is missing, build, run the whole test suite (ctest)
#   make test-sanitize   the same suite built with clang, ASan + UBSan (CPU only)
#   make test-nocuda     the suite in a build with EMBER_CUDA=OFF
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: deps configure build run test test-sanitize test-nocuda install clean

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@bash scripts/main-job.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The sanitizer pass: the suite built with clang, ASan and UBSan, in the tree the fuzzers use
# (scripts/fuzz.sh configures it: the libraries at -O1, the test files at -O0, line tables).
# It leaves out benchmarks/ (timing code; `make test` builds and smoke-tests it), the
# EMBER_KERNELS=reference re-runs of whole suites (tests/reference_mode.cmake: each suite
# compares the reference kernels with the fast ones, so the reference loops run under the
# sanitizers anyway), the docs checks (scripts, no compiled code) and the install test (it
# builds a downstream project, which would need the sanitizers' link flags). All of this keeps
# CI within its hour.
test-sanitize: deps
	@FUZZ_BUILD=build-sanitize bash scripts/fuzz.sh --build-only
	@cmake --build build-sanitize -j $(JOBS)
	@cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) -E "^(reference kernels|docs|install): "

test-nocuda: deps
	@cmake -S . -B build-nocuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=OFF >/dev/null
	@cmake --build build-nocuda -j $(JOBS)
	@cd build-nocuda && ctest --output-on-failure -j $(JOBS)

install: build
	@cmake --install $(BUILD) --prefix $(or $(PREFIX),$(BUILD)/install)

clean:
	rm -rf $(BUILD) build-sanitize build-nocuda
