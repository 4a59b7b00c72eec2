# ember — the two commands of the README, and a few more for developers.
#   make run             install what is missing, build, run the main job
#   make test            install what is missing, build, run the whole test suite (ctest)
#   make test-sanitize   the same suite built with ASan + UBSan (CPU only)
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

# The sanitizer pass leaves out benchmarks/ (timing code; `make test` builds and smoke-tests
# it) and the EMBER_KERNELS=reference re-runs of whole suites (tests/reference_mode.cmake):
# the suites themselves run here, and each compares the reference kernels with the fast ones,
# so the reference loops run under ASan + UBSan too. Both kept CI within its hour.
# Debug info is line tables only (-g1), compressed (-gz): a sanitizer report still names
# file and line, and the tree takes a fraction of the disk full -g needs (CI ran out once).
test-sanitize: deps
	@cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -gz" -DCMAKE_C_FLAGS_DEBUG="-g1 -gz" -DEMBER_CUDA=OFF -DEMBER_SANITIZE=ON -DEMBER_BUILD_BENCHMARKS=OFF >/dev/null
	@cmake --build build-sanitize -j $(JOBS)
	@cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) -E "^reference kernels: "

test-nocuda: deps
	@cmake -S . -B build-nocuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=OFF >/dev/null
	@cmake --build build-nocuda -j $(JOBS)
	@cd build-nocuda && ctest --output-on-failure -j $(JOBS)

install: build
	@cmake --install $(BUILD) --prefix $(or $(PREFIX),$(BUILD)/install)

clean:
	rm -rf $(BUILD) build-sanitize build-nocuda
