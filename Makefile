# The two commands of the README: `make demo` and `make test`.
# Both install what is missing (scripts/setup.sh), configure and build.
BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all setup configure build demo demo-run test sanitize clang-check fuzz-build fuzz fuzz-smoke bench clean format

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

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# ASan+UBSan: the whole suite under sanitizers (separate build tree).
sanitize:
	@$(MAKE) test BUILD=build-asan BUILD_TYPE=Debug CMAKE_ARGS="-DREFLEX_SANITIZE=ON"

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
	@build-fuzz/tests/fuzz/fuzz_rfx -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 tests/fuzz/corpus tests/fuzz/seeds
	@build-fuzz/tests/fuzz/fuzz_runtime -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=20 tests/fuzz/runtime_corpus tests/fuzz/runtime_seeds

# A smoke run (CI, after a change): from the seeds only, into a scratch corpus
# emptied first (build-fuzz/smoke/), so FUZZ_SMOKE_SECONDS each are spent
# fuzzing rather than replaying the committed corpora.
FUZZ_SMOKE_SECONDS ?= 30
fuzz-smoke: fuzz-build
	@rm -rf build-fuzz/smoke && mkdir -p build-fuzz/smoke/rfx build-fuzz/smoke/runtime
	@build-fuzz/tests/fuzz/fuzz_rfx -max_total_time=$(FUZZ_SMOKE_SECONDS) -max_len=65536 -timeout=10 build-fuzz/smoke/rfx tests/fuzz/seeds
	@build-fuzz/tests/fuzz/fuzz_runtime -max_total_time=$(FUZZ_SMOKE_SECONDS) -max_len=65536 -timeout=20 build-fuzz/smoke/runtime tests/fuzz/runtime_seeds

bench: build
	@bash bench/ingest_bench.sh

format:
	@find compiler runtime tools tests include examples bench -name '*.cpp' -o -name '*.h' | grep -v /generated/ | xargs clang-format -i

clean:
	@rm -rf $(BUILD) build-asan build-fuzz $(CLANG_BUILD)
