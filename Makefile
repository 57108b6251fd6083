# The two commands of the README: `make demo` and `make test`.
# Both install what is missing (scripts/setup.sh), configure and build.
BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all setup configure build demo demo-run test sanitize clang-check clang-ci fuzz-configure fuzz-artifact-seed fuzz-build fuzz fuzz-smoke fuzz-fast bench clean format

all: build

setup:
	@bash scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

REFLEXC = $(BUILD)/tools/reflexc/reflexc
REFLEX  = $(BUILD)/tools/reflex/reflex

demo: build
	@$(MAKE) --no-print-directory demo-run

# The demo's commands alone, on an existing build (ctest runs this: make_demo_run).
demo-run:
	@$(REFLEXC) check kb/
	@$(REFLEX) diagnose --kb kb --format text examples/incident-pcie

# The gcc suite, then clang-ci (below): clang 14 must accept every file and
# every fuzzer must survive a short run. CLANG_CI=0 skips the clang part
# (e.g. `make sanitize`, which runs this target on an ASan tree).
CLANG_CI ?= 1
test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@if [ "$(CLANG_CI)" = 1 ]; then $(MAKE) --no-print-directory clang-ci; fi

# ASan+UBSan: the whole suite under sanitizers (separate build tree).
sanitize:
	@$(MAKE) test BUILD=build-asan BUILD_TYPE=Debug CMAKE_ARGS="-DREFLEX_SANITIZE=ON" CLANG_CI=0

# Everything (libraries, tools, tests, benches) built with clang in its own
# tree, -Werror as in every build: CI builds with gcc, and clang 14 rejects
# code gcc 12 accepts (e.g. lambdas capturing structured bindings). No build
# type: compiling is the check, and it is quickest without optimisation.
CLANG_BUILD ?= build-clang
clang-check: setup
	@command -v clang++ >/dev/null || { echo "clang-check: needs clang++ (apt: clang)"; exit 2; }
	@cmake -S . -B $(CLANG_BUILD) -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ $(CMAKE_ARGS) >/dev/null
	@cmake --build $(CLANG_BUILD) -j $(JOBS)

# libFuzzer (clang, ASan+UBSan), FUZZ_SECONDS each: the .rfx parser+checker,
# then the runtime's input side (topology, envelopes, raw lines, diagnosis).
# libFuzzer replays the whole corpus before it starts counting FUZZ_SECONDS
# (minutes with these slow targets); fuzz-smoke below does not.
FUZZ_SECONDS ?= 600
fuzz-build: setup
	@cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DREFLEX_FUZZ=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzz_rfx fuzz_runtime

fuzz: fuzz-build
	@mkdir -p tests/fuzz/corpus tests/fuzz/runtime_corpus
	@build-fuzz/tests/fuzz/fuzz_rfx -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -dict=tests/fuzz/rfx.dict tests/fuzz/corpus tests/fuzz/seeds
	@build-fuzz/tests/fuzz/fuzz_runtime -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=20 tests/fuzz/runtime_corpus tests/fuzz/runtime_seeds

# The fast targets (tests/fuzz/fuzz_fast.cpp: topology loader, line parser,
# envelope decoder, artifact decoder, .rfx front end without the regex
# compile, event codec), FUZZ_FAST_SECONDS each, growing the committed
# corpora tests/fuzz/corpus_<name> (every build replays them). The .rfx
# targets get the grammar's keywords as a dictionary (tests/fuzz/rfx.dict).
FUZZ_FAST_SECONDS ?= 60
FUZZ_FAST = topology line_parser envelope artifact rfx_sema codec
# Optimised (-O1, asserts kept) as libFuzzer advises, in their own clang tree;
# the entropic scheduler is off (-entropic=0): on these
# targets it spent 88% of the time updating feature frequencies (62 vs 272
# exec/s, measured). Under ASan alone, as OSS-Fuzz's libFuzzer build and the
# issue's rate target: UBSan's checks cost fuzz_rfx_sema 22% of its rate
# (630 vs 809 exec/s, one build against the other at once) and their branches
# are 5,500 of its 17,700 edges, checks rather than code. UBSan still sees
# every corpus input: `make sanitize` (ASan+UBSan) replays all the corpora,
# and CI's clang smoke build fuzzes with both. FUZZ_SANITIZERS=address,undefined
# builds these with both. Every fuzz build leaves the standard library's and
# nlohmann's templates out of coverage (tests/fuzz/coverage_ignorelist.txt).
FUZZ_BUILD ?= build-fuzz-fast
FUZZ_SANITIZERS ?= address
fuzz-configure: setup
	@command -v clang++ >/dev/null || { echo "needs clang++ (apt: clang)"; exit 2; }
	@cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE= "-DCMAKE_C_FLAGS=-O1 -g" "-DCMAKE_CXX_FLAGS=-O1 -g" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DREFLEX_FUZZ=ON -DREFLEX_FUZZ_SANITIZERS=$(FUZZ_SANITIZERS) -DREFLEX_BUILD_BENCH=ON >/dev/null

# The artifact target's seed: a real artifact (the small bench KB).
fuzz-artifact-seed: build
	@mkdir -p $(FUZZ_BUILD)/artifact_seed && $(REFLEXC) build bench/kb -o $(FUZZ_BUILD)/artifact_seed/bench.rfxkb 2>/dev/null

fuzz-fast: build fuzz-configure fuzz-artifact-seed
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_FAST))
	@for t in $(FUZZ_FAST); do \
	  seeds=tests/fuzz/seeds_fast/lines; \
	  dict=; case $$t in topology) seeds="kb/tests/topologies examples/incident-pcie";; envelope) seeds=tests/fuzz/seeds_fast/envelopes;; artifact) seeds=$(FUZZ_BUILD)/artifact_seed;; rfx_sema) seeds=tests/fuzz/seeds dict=-dict=tests/fuzz/rfx.dict;; codec) seeds=tests/fuzz/seeds_fast/events;; esac; \
	  mkdir -p tests/fuzz/corpus_$$t; \
	  echo "== fuzz_$$t ($(FUZZ_FAST_SECONDS) s)"; \
	  $(FUZZ_BUILD)/tests/fuzz/fuzz_$$t -max_total_time=$(FUZZ_FAST_SECONDS) -entropic=0 -max_len=16384 -timeout=10 -print_final_stats=1 $$dict tests/fuzz/corpus_$$t $$seeds >$(FUZZ_BUILD)/fuzz_$$t.log 2>&1; rc=$$?; \
	  grep -E "stat::number_of_executed_units|stat::average_exec_per_sec|ERROR|SUMMARY" $(FUZZ_BUILD)/fuzz_$$t.log; \
	  [ $$rc -eq 0 ] || { echo "fuzz_$$t failed (exit $$rc): $(FUZZ_BUILD)/fuzz_$$t.log"; exit 1; }; \
	done

# CI's clang part (run by `make test`), in its own clang tree
# (CLANG_CI_BUILD): (1) the clang 14 frontend over every translation unit with
# the build's -Werror flags, plus the function-size report
# (tests/fuzz/clang_frontend.py; FUNCTION_SIZE_GATE=1, the default, makes a function of 120
# lines or more fail it), (2) every fuzzer and the libraries it needs built by
# clang with ASan+UBSan at -O0 (2.5x cheaper to compile than -O1, measured:
# reasoner.cpp 14 s vs 35 s of CPU; a 30 s smoke run needs coverage, not
# speed), (3) every fuzzer FUZZ_SMOKE_SECONDS from its seeds, two at a time
# (tests/fuzz/smoke.sh), (4) the tables of hostile input (the spoof, archive,
# stdin and inputs CLI tests; the BadInput, TopologyLoad, Bundle and Sources
# gtests) against this tree's own ASan+UBSan `reflex`, `reflexc` and test
# binaries (SANITIZED_TABLES; tests/fuzz/sanitized_tables.sh): any sanitizer
# report fails it. -fno-sanitize-recover=undefined: UB aborts, in the fuzzers too.
FUNCTION_SIZE_GATE ?= 1
CLANG_CI_BUILD ?= build-clang-ci
FUZZ_ALL = $(addprefix fuzz_,$(FUZZ_FAST)) fuzz_rfx fuzz_runtime
SANITIZED_TABLES = reflex reflexc formats_test topology_test compiler_tests
clang-ci: build
	@command -v clang++ >/dev/null || { echo "clang-ci: needs clang++ (apt: clang)"; exit 2; }
	@command -v clang-tidy-14 >/dev/null || { echo "clang-ci: needs clang-tidy-14 (apt: clang-tidy)"; exit 2; }
	@cmake -S . -B $(CLANG_CI_BUILD) -G Ninja -DCMAKE_BUILD_TYPE= "-DCMAKE_C_FLAGS=-O0 -gline-tables-only -fno-sanitize-recover=undefined" "-DCMAKE_CXX_FLAGS=-O0 -gline-tables-only -fno-sanitize-recover=undefined" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DREFLEX_FUZZ=ON -DREFLEX_FUZZ_SANITIZERS=address,undefined -DREFLEX_BUILD_BENCH=ON >/dev/null
	@cmake --build $(CLANG_CI_BUILD) -j $(JOBS) --target grammar/generated/ReflexParser.h >/dev/null
	@python3 tests/fuzz/clang_frontend.py $(CLANG_CI_BUILD) --jobs $(JOBS) $(if $(filter 1,$(FUNCTION_SIZE_GATE)),--gate-size)
	@cmake --build $(CLANG_CI_BUILD) -j $(JOBS) --target $(FUZZ_ALL) $(SANITIZED_TABLES) >$(CLANG_CI_BUILD)/fuzz-build.log 2>&1 || { tail -40 $(CLANG_CI_BUILD)/fuzz-build.log; exit 1; }
	@echo "clang ASan+UBSan build (fuzzers, tools, table tests): ok ($(CLANG_CI_BUILD)/fuzz-build.log)"
	@mkdir -p $(CLANG_CI_BUILD)/artifact_seed && $(REFLEXC) build bench/kb -o $(CLANG_CI_BUILD)/artifact_seed/bench.rfxkb 2>/dev/null
	@bash tests/fuzz/smoke.sh $(CLANG_CI_BUILD) $(FUZZ_SMOKE_SECONDS)
	@bash tests/fuzz/sanitized_tables.sh $(CLANG_CI_BUILD) $(JOBS)

# A smoke run (CI, after a change): from the seeds only, into a scratch corpus
# emptied first (build-fuzz/smoke/), so FUZZ_SMOKE_SECONDS each are spent
# fuzzing rather than replaying the committed corpora.
FUZZ_SMOKE_SECONDS ?= 30
fuzz-smoke: fuzz-build
	@bash tests/fuzz/smoke.sh build-fuzz $(FUZZ_SMOKE_SECONDS) rfx runtime

# Every figure of the README's Performance table from one run (bench/bench_all.sh):
# ingest by mix against wc -l/grep/rg, --threads, and the engine bench, from a
# Release tree of its own (warnings are the other builds' gate: a benchmark
# does not stop on an -O3-only diagnostic). REFLEX_BENCH_MB=64 for a quick run.
BENCH_BUILD ?= build-rel
bench: setup
	@cmake -S . -B $(BENCH_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DREFLEX_WERROR=OFF $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BENCH_BUILD) -j $(JOBS) --target reflex reflexc reflex-naive-regex reflex-hs-scan-floor engine_bench
	@BUILD=$(BENCH_BUILD) bash bench/bench_all.sh

format:
	@find compiler runtime tools tests include examples bench -name '*.cpp' -o -name '*.h' | grep -v /generated/ | xargs clang-format -i

clean:
	@rm -rf $(BUILD) $(BENCH_BUILD) build-asan build-fuzz $(FUZZ_BUILD) $(CLANG_BUILD) $(CLANG_CI_BUILD)
