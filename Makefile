# perch — build, demo and tests. See README.md and docs/.
#
#   make            build/perch (and the BPF skeleton, the test workloads)
#   make demo       install missing packages, build, profile bench/demo and print the report
#   make test       install missing packages, build, run unit tests (plain and ASan/UBSan),
#                   BPF integration tests and the format check
#   make san        the sanitizer configuration in build-san/
#   make fuzz       the libFuzzer harnesses (tests/fuzz_*.c) in build-fuzz/
#   make bench      bench/overhead.sh, symbolize.sh, unwind.sh, regions.sh: each table printed and
#                   written into its section of docs/BENCHMARKS.md (BENCH_OUT= for stdout only)
#   make install    perch, include/perch.h and libperch.{a,so} under PREFIX (/usr/local);
#                   lib/perch/libperch_cuda.so where the CUDA toolkit is; the man pages
#                   share/man/man1/perch-CMD.1 (from docs/perch-CMD.md)

BUILD    ?= build
SAN      ?=
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes -Werror
CFLAGS   ?= -O2 -g
CFLAGS   += $(WARN) -std=gnu11 -MMD -MP -D_GNU_SOURCE -I$(BUILD) -I. -Iuserspace -Iinclude
ifneq ($(SAN),)
# -O1, as AddressSanitizer's documentation suggests: half the compile time of -O2 under the
# sanitizers (4.6 times the plain build's), which made the sanitizer build most of make test's
# build time
CFLAGS   += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=address,undefined
endif
LDLIBS   := -lbpf -lelf -ldw -lz -lm -lprotobuf-c -pthread # -pthread: the early stacks' reader (record/sampler/sampler_early.c)
LDLIBS   += -llzma # MiniDebugInfo (symbolize/minidebug.c)
LDLIBS   += -lcapstone # perch annotate's disassembly (report/annotate.c)

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(WARN) -Wno-missing-prototypes -Wno-unused-parameter \
	      -I$(BUILD) -I.

CLI_SRCS  := $(wildcard userspace/cli/*.c)
CLI_OBJS  := $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRCS))
# cuda/'s stream reader and join need no CUPTI header: perch reads the channel with them always.
CORE_SRCS := $(filter-out $(CLI_SRCS),$(wildcard userspace/*/*.c userspace/*/*/*.c symbolize/*.c unwind/*.c)) \
	     cuda/gpu_stream.c cuda/gpu_join.c
CORE_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(CORE_SRCS)) $(BUILD)/profile.pb-c.o $(BUILD)/otlp.pb-c.o
TESTS     := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))
WORKLOADS := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(wildcard tests/workloads/*.c)) \
	     $(patsubst tests/workloads/%.cpp,$(BUILD)/workloads/%,$(wildcard tests/workloads/*.cpp)) \
	     $(BUILD)/workloads/shares-nofp $(BUILD)/workloads/jit-nofp $(BUILD)/workloads/early-nofp $(BUILD)/workloads/regions-so
WORKLOADS += $(BUILD)/workloads/hotline-nodebug

# CUDA (cuda/): built only where the toolkit's CUPTI headers are (CUDA_HOME); elsewhere `make`
# says it skipped it and the CUDA tests are left out. Rules at the end of this file.
CUDA_HOME ?= /usr/local/cuda
CUPTI_H   := $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/include/cupti.h $(CUDA_HOME)/include/cupti.h))
ifeq ($(CUPTI_H),)
TESTS     := $(filter-out $(BUILD)/tests/test_cuda,$(TESTS))
endif

.PHONY: all deps demo test check check-unit check-unit-plain check-integration check-format san clean format bench bench-size \
	install fuzz
.DEFAULT_GOAL := all
.SECONDARY:

all: $(BUILD)/perch $(WORKLOADS) $(BUILD)/demo $(BUILD)/libperch.a $(BUILD)/libperch.so \
     $(BUILD)/tests/mkrec $(BUILD)/tests/timeline_dump

deps:
	@bash scripts/install-deps.sh

$(BUILD)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/sample.bpf.o: bpf/sample.bpf.c $(wildcard bpf/*.bpf.h) bpf/perch_bpf.h unwind/unwind_row.h \
		       $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/sample.skel.h: $(BUILD)/sample.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# The sampler (record/sampler/) includes the BPF skeleton: built after it.
SKEL_SRCS := $(wildcard userspace/record/sampler/*.c)
$(SKEL_SRCS:%.c=$(BUILD)/%.o): $(BUILD)/sample.skel.h
$(BUILD)/tests/test_btfmin.o: $(BUILD)/sample.skel.h

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# pprof's profile.proto (report/pprof.c) and OTLP's profiles messages (report/otlp.proto,
# report/otlp.c), as C from protoc-c into the build folder (BUILD or build-fuzz): generated code,
# so not held to our warnings.
%/profile.pb-c.c %/profile.pb-c.h: userspace/report/profile.proto
	@mkdir -p $*
	protoc-c --proto_path=$(dir $<) --c_out=$* $<
%/otlp.pb-c.c %/otlp.pb-c.h: userspace/report/otlp.proto
	@mkdir -p $*
	protoc-c --proto_path=$(dir $<) --c_out=$* $<

$(BUILD)/%.pb-c.o: $(BUILD)/%.pb-c.c
	$(CC) $(filter-out -Werror -W%,$(CFLAGS)) -c $< -o $@

$(BUILD)/userspace/report/pprof.o: $(BUILD)/profile.pb-c.h
$(BUILD)/userspace/report/otlp.o: $(BUILD)/otlp.pb-c.h
$(BUILD)/userspace/report/otlp.o: CFLAGS += -DPERCH_RELEASE='"$(PERCH_VERSION)"'

# --format=html's viewer (report/html/: shell, CSS, JS) built into perch as byte arrays, so the
# report needs no file, node or network at run time.
HTML_ASSETS := userspace/report/html/shell.html userspace/report/html/viewer.css \
	       userspace/report/html/viewer.js
%/report_html_assets.h: $(HTML_ASSETS)
	@mkdir -p $*
	(cd userspace/report/html && for f in $(notdir $(HTML_ASSETS)); do xxd -i $$f; done) | \
		sed 's/^unsigned/static const unsigned/' > $@.tmp && mv $@.tmp $@

$(BUILD)/userspace/report/html.o: $(BUILD)/report_html_assets.h

$(BUILD)/libperchcore.a: $(CORE_OBJS)
	rm -f $@ && ar rcs $@ $^

# `perch --version`: the release below and the commit built (git describe), in BUILD/version.h,
# rewritten only when it changes (so only cli/main.o rebuilds).
PERCH_VERSION := 0.1
$(BUILD)/version.h: FORCE
	@mkdir -p $(@D)
	@v="$(PERCH_VERSION) (git $$(git describe --always --dirty 2>/dev/null || echo unknown))"; \
	echo "#define PERCH_VERSION_STRING \"$$v\"" >$@.tmp; \
	cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/userspace/cli/main.o: $(BUILD)/version.h
.PHONY: FORCE
FORCE:

$(BUILD)/perch: $(CLI_OBJS) $(BUILD)/libperchcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libperchcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# Synthetic recordings through the real writer, for the exporters' tests (tests/chrome.sh) and
# the README's export measurements.
$(BUILD)/tests/mkrec: $(BUILD)/tests/mkrec.o $(BUILD)/libperchcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The region runtime users link into their programs (include/perch.h): no dependencies beyond
# libc and pthreads, position independent for the shared library.
$(BUILD)/runtime/region_runtime.o: runtime/perch.c runtime/perch_models.h include/perch.h include/perch_abi.h
	@mkdir -p $(@D)
	$(CC) $(filter-out -I%,$(CFLAGS)) -Iinclude -fPIC -c $< -o $@

$(BUILD)/libperch.a: $(BUILD)/runtime/region_runtime.o
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libperch.so: $(BUILD)/runtime/region_runtime.o
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libperch.so -o $@ $^ -pthread

$(BUILD)/tests/test_regions: $(BUILD)/tests/test_regions.o $(BUILD)/libperch.a $(BUILD)/libperchcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka -pthread

$(BUILD)/tests/test_regions.o: CFLAGS += -DPERCH_INCLUDE_DIR=\"$(CURDIR)/include\"

# Fuzzing. make fuzz: the harnesses tests/fuzz_*.c with libFuzzer and the sanitizers, in
# build-fuzz/ (run one: build-fuzz/fuzz_report -max_total_time=60 DIR tests/corpus): recordings
# (recording, report), region blocks as perch reads them (regions), perch push's HTTP replies (http),
# the --control FIFO's lines (control). make
# check-unit runs each harness's entry point over every file of tests/corpus/ without libFuzzer
# (tests/fuzz_replay.c), plain and under the sanitizers.
FUZZ_HARNESSES := recording report regions http control pyline
FUZZ_CFLAGS    := -g -O1 $(WARN) -std=gnu11 -MMD -MP -D_GNU_SOURCE -Ibuild-fuzz -I. -Iuserspace -Iinclude -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_OBJS      := $(patsubst %.c,build-fuzz/%.o,$(filter-out $(SKEL_SRCS),$(CORE_SRCS)) \
		  tests/fuzz_common.c) build-fuzz/profile.pb-c.o build-fuzz/otlp.pb-c.o
REPLAYS        := $(FUZZ_HARNESSES:%=$(BUILD)/tests/replay_%)

fuzz:
	@bash scripts/install-deps.sh fuzz
	@$(MAKE) --no-print-directory $(FUZZ_HARNESSES:%=build-fuzz/fuzz_%)

build-fuzz/%.o: %.c
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

build-fuzz/%.pb-c.o: build-fuzz/%.pb-c.c
	$(CLANG) $(filter-out -Werror -W%,$(FUZZ_CFLAGS)) -fsanitize=fuzzer-no-link -c $< -o $@

build-fuzz/userspace/report/pprof.o: build-fuzz/profile.pb-c.h
build-fuzz/userspace/report/otlp.o: build-fuzz/otlp.pb-c.h
build-fuzz/userspace/report/html.o: build-fuzz/report_html_assets.h

build-fuzz/libperchfuzz.a: $(FUZZ_OBJS)
	rm -f $@ && ar rcs $@ $^

build-fuzz/fuzz_%: build-fuzz/tests/fuzz_%.o build-fuzz/libperchfuzz.a
	$(CLANG) -fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS)

$(BUILD)/tests/replay_%: $(BUILD)/tests/fuzz_%.o $(BUILD)/tests/fuzz_common.o \
			 $(BUILD)/tests/fuzz_replay.o $(BUILD)/libperchcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

PREFIX ?= /usr/local
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(BUILD)/perch $(DESTDIR)$(PREFIX)/bin/perch
	install -m 644 include/perch.h include/perch_abi.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libperch.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libperch.so $(DESTDIR)$(PREFIX)/lib/
	bash scripts/man.sh install $(BUILD)/perch $(DESTDIR)$(PREFIX)/share/man/man1

# The man pages alone (perch-CMD.1 from docs/perch-CMD.md and BUILD/perch's option tables), with
# no build: tests/help.sh installs them from the perch it tests.
.PHONY: install-man
install-man:
	bash scripts/man.sh install $(BUILD)/perch $(DESTDIR)$(PREFIX)/share/man/man1
	-ldconfig

# Test workloads: frame pointers on, no inlining of the functions the tests look for.
WL_CFLAGS := -Itests/workloads -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline \
	     -Wall -Wextra -Werror -pthread
$(BUILD)/workloads/%: tests/workloads/%.c tests/workloads/burn.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -o $@ $< -lm

# A stand-in NVML (tests/nvml/fake_nvml.c: two GPUs with known readings) that
# tests/integration/metrics.sh hands perch through LD_LIBRARY_PATH; never sanitized (it stands
# in for NVIDIA's library). Not a GPU test.
all: $(BUILD)/tests/nvml/libnvidia-ml.so.1
$(BUILD)/tests/nvml/libnvidia-ml.so.1: tests/nvml/fake_nvml.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $(WARN) -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

# Region markers: the runtime built in, and (regions-so) from a libperch.so beside it. Built
# from source here so the sanitizer build's runtime flags stay out of the workloads.
$(BUILD)/workloads/regions: tests/workloads/regions.c tests/workloads/burn.h runtime/perch.c \
			    include/perch.h include/perch_abi.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -Iinclude -o $@ $< runtime/perch.c -lm

$(BUILD)/workloads/steps: tests/workloads/steps.c tests/workloads/burn.h runtime/perch.c \
			  include/perch.h include/perch_abi.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -Iinclude -o $@ $< runtime/perch.c -lm

# A region runtime gone bad (tests/integration/hostile-regions.sh).
$(BUILD)/workloads/hostile-regions: tests/workloads/hostile-regions.c tests/workloads/burn.h \
				    runtime/perch.c include/perch.h include/perch_abi.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -Iinclude -o $@ $< runtime/perch.c -lm

# Cost models (tests/integration/model.sh): three sized regions of known cost shape.
$(BUILD)/workloads/costs: tests/workloads/costs.c runtime/perch.c include/perch.h \
			  include/perch_abi.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -Iinclude -o $@ $< runtime/perch.c -lm

$(BUILD)/workloads/libperch.so: runtime/perch.c include/perch.h include/perch_abi.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -Iinclude -fPIC -shared -Wl,-soname,libperch.so -o $@ $<

$(BUILD)/workloads/regions-so: tests/workloads/regions.c tests/workloads/burn.h \
			       $(BUILD)/workloads/libperch.so
	$(CC) $(WL_CFLAGS) -Iinclude -o $@ $< -L$(BUILD)/workloads -lperch -Wl,-rpath,'$$ORIGIN' -lm

# Workloads for DWARF unwinding: built the way distributions build, without frame pointers (no
# sibling calls either: a function that tail-calls leaves no frame for any unwinder to find).
NOFP_CFLAGS := -Itests/workloads -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls \
	       -Wall -Wextra -Werror -pthread
$(BUILD)/workloads/shares-nofp: tests/workloads/shares.c tests/workloads/burn.h
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -o $@ $< -lm

# CPython from Debian's shared libpython3.11 (tests/integration/python.sh): python3.11-dev's
# headers and library, never pyenv's or another python3-config's.
$(BUILD)/workloads/pyembed: tests/workloads/pyembed.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -I/usr/include/python3.11 -Wall -Wextra -Werror -o $@ $< -lpython3.11

# Early ticks (tests/integration/early.sh): no frame pointers, CPU from its first instruction.
$(BUILD)/workloads/early-nofp: tests/workloads/early.c tests/workloads/burn.h
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -o $@ $< -lm

# JIT code called from native code without frame pointers, as node's and the JVM's are.
$(BUILD)/workloads/jit-nofp: tests/workloads/jit.c tests/workloads/burn.h
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -o $@ $< -lm

# perch annotate without DWARF lines: the same code, its debug sections stripped (symbols kept).
$(BUILD)/workloads/hotline-nodebug: $(BUILD)/workloads/hotline
	strip --strip-debug -o $@ $<

$(BUILD)/workloads/deep: tests/workloads/deep.c tests/workloads/burn.h
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -o $@ $< -lm

$(BUILD)/workloads/signals: tests/workloads/signals.c tests/workloads/burn.h
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -o $@ $< -lm

$(BUILD)/workloads/%: tests/workloads/%.cpp tests/workloads/burn.h
	@mkdir -p $(@D)
	$(CXX) $(filter-out -pthread,$(WL_CFLAGS)) -o $@ $<

$(BUILD)/demo: bench/demo.c tests/workloads/burn.h
	$(CC) $(WL_CFLAGS) -Itests/workloads -o $@ $<

demo: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@echo "== perch record -- $(BUILD)/demo"
	$(BUILD)/perch record -o $(BUILD)/demo.data -- $(BUILD)/demo
	@echo "== perch report $(BUILD)/demo.data"
	$(BUILD)/perch report --min-percent=2 $(BUILD)/demo.data

# Both configurations are built first, on every CPU; then make check (tests/check.sh): the checks
# that measure CPU shares and times one at a time, the others on the CPU time they leave idle.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all $(TESTS) $(REPLAYS)
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=build-san SAN=1 all cuda-fixtures \
		$(TESTS:$(BUILD)/%=build-san/%) $(REPLAYS:$(BUILD)/%=build-san/%)
	@$(MAKE) --no-print-directory check

# make check: tests/check.sh runs the integration scenarios of both builds one after another, and
# meanwhile, under SCHED_IDLE on the CPU time they leave idle, the checks that measure nothing
# about time (sanitizer unit tests, outputs against reference readers).
check: all $(TESTS) $(REPLAYS)
	@$(MAKE) --no-print-directory BUILD=build-san SAN=1 all cuda-fixtures \
		$(TESTS:$(BUILD)/%=build-san/%) $(REPLAYS:$(BUILD)/%=build-san/%)
	@bash tests/check.sh

check-unit: check-unit-plain
	@$(MAKE) --no-print-directory BUILD=build-san SAN=1 san-unit

check-unit-plain: $(TESTS) $(REPLAYS)
	@bash tests/run-unit.sh $(TESTS)
	@for r in $(REPLAYS); do $$r tests/corpus/* || exit 1; done

san-unit: $(TESTS) $(REPLAYS)
	@bash tests/run-unit.sh $(TESTS)
	@for r in $(REPLAYS); do $$r tests/corpus/* || exit 1; done

# One part at a time, without the background (make check runs them all, in less time): the checks
# of outputs against reference readers side by side (tests/parallel.sh), then the integration
# scenarios, which measure CPU shares and times, alone.
check-integration: all
	@bash tests/parallel.sh $(BUILD) html speedscope chrome query golden symbolize readme pprof otlp merge push help
	@bash tests/integration.sh $(BUILD)
	@$(MAKE) --no-print-directory BUILD=build-san SAN=1 all cuda-fixtures
	@echo "== again with perch built with -fsanitize=address,undefined"
	@bash tests/parallel.sh build-san HTML_REFERENCE=$(BUILD):html SAME_OUTPUT_REF=$(BUILD):same-output golden query symbolize \
		readme pprof otlp merge push help
	@bash tests/integration.sh build-san

check-format:
	@bash scripts/check-format.sh
	@bash scripts/check-layers.sh
	@bash tests/layers.sh
	@bash scripts/check-size.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

san:
	@$(MAKE) --no-print-directory BUILD=build-san SAN=1 all $(TESTS:build/%=build-san/%)

# Each script also writes its table into its own section of BENCH_OUT (bench/publish.sh).
BENCH_OUT ?= docs/BENCHMARKS.md
bench: all
	@BENCH_OUT=$(BENCH_OUT) bash bench/overhead.sh $(BUILD)
	@BENCH_OUT=$(BENCH_OUT) bash bench/symbolize.sh $(BUILD)
	@BENCH_OUT=$(BENCH_OUT) bash bench/unwind.sh $(BUILD)
	@BENCH_OUT=$(BENCH_OUT) bash bench/regions.sh $(BUILD)
	@BENCH_OUT=$(BENCH_OUT) bash bench/python.sh $(BUILD)

# Recording size against run length (10 s, 60 s, 600 s: some 22 minutes); not in `make bench`.
bench-size: all
	@BENCH_OUT=$(BENCH_OUT) bash bench/size.sh $(BUILD)

clean:
	rm -rf build build-san build-fuzz

# CUDA. The injection library runs inside the user's program: position independent, only
# InitializeInjection and the probe perch_cuda_launch exported, never built with the sanitizers
# (a sanitized library cannot load into an unsanitized program). tests/cuda.sh drives it with the
# stand-in libcupti of tests/cuda/fake_cupti.c (not a GPU test: tests/gpu/ is).
ifneq ($(CUPTI_H),)
CUDA_CFLAGS := -isystem $(dir $(CUPTI_H)) -isystem $(CUDA_HOME)/include -Icuda
CUDA_CFLAGS += $(if $(shell grep -l cuptiSubscribe_v2 $(dir $(CUPTI_H))cupti_callbacks.h 2>/dev/null),-DPERCH_HAVE_CUPTI_SUBSCRIBE_V2)
CUPTI_LIB   := $(dir $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so $(CUDA_HOME)/lib64/libcupti.so)))
# (the sanitizer build's -O1 too: the stand-ins are built as a user builds them, their frames as at -O2)
NOSAN       := $(filter-out -fsanitize% -fno-sanitize% -O1,$(CFLAGS))
INJECT_OBJS := $(patsubst %.c,$(BUILD)/cuda-pic/%.o,runtime/cuda/inject.c runtime/cuda/inject_sites.c cuda/gpu_records.c userspace/lib/u64map.c)
CUDA_E2E    := $(BUILD)/libperch_cuda.so $(BUILD)/tests/cuda/libcupti.so.13 $(BUILD)/tests/cuda/host \
	       $(BUILD)/tests/cuda/dump $(BUILD)/tests/cuda/storm $(BUILD)/tests/cuda/host-linked \
	       $(BUILD)/tests/cuda/fatbin $(BUILD)/tests/cuda/flood

all: $(BUILD)/libperch_cuda.so
check-unit-plain: check-cuda
# the stand-in's fixtures, for tests/integration/gpu-standin.sh under the sanitizer build too
cuda-fixtures: $(CUDA_E2E)
# perch --gpu finds it beside itself, or at ../lib/perch/ from its bin/.
install: install-cuda
.PHONY: install-cuda
install-cuda: $(BUILD)/libperch_cuda.so
	install -d $(DESTDIR)$(PREFIX)/lib/perch
	install -m 755 $(BUILD)/libperch_cuda.so $(DESTDIR)$(PREFIX)/lib/perch/
.PHONY: check-cuda cuda-fixtures
check-cuda: $(CUDA_E2E)
	@bash tests/cuda.sh $(BUILD)

$(BUILD)/cuda/%.o $(BUILD)/tests/test_cuda.o $(BUILD)/tests/cuda/%.o: CFLAGS += $(CUDA_CFLAGS)

$(BUILD)/cuda-pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(NOSAN) $(CUDA_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/libperch_cuda.so: $(INJECT_OBJS)
	$(CC) -shared -Wl,-soname,libperch_cuda.so -Wl,--no-undefined -o $@ $^ \
		-L$(CUPTI_LIB) -Wl,-rpath,$(CUPTI_LIB) -lcupti -pthread

$(BUILD)/tests/test_cuda: $(BUILD)/tests/test_cuda.o $(BUILD)/cuda/gpu_records.o \
			  $(BUILD)/libperchcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

$(BUILD)/tests/cuda/libcupti.so.13: tests/cuda/fake_cupti.c
	@mkdir -p $(@D)
	$(CC) $(NOSAN) $(CUDA_CFLAGS) -fPIC -shared -Wl,-soname,libcupti.so.13 -o $@ $< -pthread

# with the region runtime built in (unsanitized, as the program a user builds)
$(BUILD)/tests/cuda/host: tests/cuda/host.c runtime/perch.c include/perch.h include/perch_abi.h
	@mkdir -p $(@D)
	$(CC) $(NOSAN) -fno-omit-frame-pointer -Iinclude -o $@ $< runtime/perch.c -ldl -pthread

# host again, linked against a stand-in libcudart (DT_NEEDED): perch record turns --gpu on for it
$(BUILD)/tests/cuda/libcudart.so.13: tests/cuda/fake_cudart.c
	@mkdir -p $(@D)
	$(CC) $(NOSAN) -fPIC -shared -Wl,-soname,libcudart.so.13 -o $@ $<

$(BUILD)/tests/cuda/host-linked: tests/cuda/host.c runtime/perch.c include/perch.h include/perch_abi.h \
				 $(BUILD)/tests/cuda/libcudart.so.13
	$(CC) $(NOSAN) -fno-omit-frame-pointer -Iinclude -o $@ $< runtime/perch.c -ldl -pthread \
		-Wl,--no-as-needed $(BUILD)/tests/cuda/libcudart.so.13

# a program with nvcc's device-code section and no CUDA library in DT_NEEDED (a static runtime)
$(BUILD)/tests/cuda/fatbin: tests/cuda/fatbin.c
	@mkdir -p $(@D)
	$(CC) $(NOSAN) -o $@ $<

# a hostile writer to the channel (tests/integration/hostile-gpu.sh): no CUPTI, the channel header
$(BUILD)/tests/cuda/flood: tests/cuda/flood.c cuda/perch_cuda.h
	@mkdir -p $(@D)
	$(CC) $(NOSAN) -Icuda -o $@ $<

# the launch storm of bench/gpu_storm.sh (frame pointers and .eh_frame, as host)
$(BUILD)/tests/cuda/storm: tests/cuda/storm.c runtime/perch.c include/perch.h include/perch_abi.h
	@mkdir -p $(@D)
	$(CC) $(NOSAN) -fno-omit-frame-pointer -Iinclude -o $@ $< runtime/perch.c -ldl -pthread

# A launch storm through the stand-in: ns per launch with no profiler, perch record, --gpu.
.PHONY: bench-gpu-storm
bench-gpu-storm: all $(CUDA_E2E)
	@BENCH_OUT=$(BENCH_OUT) bash bench/gpu_storm.sh $(BUILD)

$(BUILD)/tests/cuda/dump: $(BUILD)/tests/cuda/dump.o \
			  $(BUILD)/libperchcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# tests/gpu/: CUDA workloads with known answers (make gpu-workloads; tests/gpu/run.sh builds them
# where a GPU is). The PTX of compute_75 in the binary runs on any newer GPU.
NVCC ?= $(CUDA_HOME)/bin/nvcc
.PHONY: gpu-workloads
gpu-workloads: $(BUILD)/gpu/spin $(CUDA_E2E)

$(BUILD)/gpu/spin: tests/gpu/spin.cu include/perch.h $(BUILD)/libperch.a
	@mkdir -p $(@D)
	$(NVCC) -O2 -g -lineinfo -Xcompiler -fno-omit-frame-pointer -Iinclude -o $@ $< $(BUILD)/libperch.a
else
all: cuda-skipped
cuda-fixtures: cuda-skipped
.PHONY: cuda-skipped cuda-fixtures
cuda-skipped:
	@echo "cuda: no cupti.h under CUDA_HOME=$(CUDA_HOME): libperch_cuda.so and its tests skipped"
endif

-include $(shell find $(BUILD) build-fuzz -name '*.d' 2>/dev/null)

# --gpu -p (attach mode) against a stand-in libcuda.so.1 (tests/cuda/fake_libcuda.c: the entry
# points with cuda.h's signatures, doing nothing; built twice into one library, the second time
# as the _ptds/_ptsz variants) and the program that calls it (tests/cuda/attach_host.c), for
# tests/integration/gpu-attach.sh. Needs only the toolkit's cuda.h; never sanitized (it stands
# in for the driver), -fno-ipa-icf so that no two of its functions are folded into one.
CUDA_H := $(wildcard $(CUDA_HOME)/include/cuda.h)
ifneq ($(CUDA_H),)
GPU_ATTACH_FIXTURES := $(BUILD)/tests/cuda/libcuda.so.1 $(BUILD)/tests/cuda/attach_host
all: $(GPU_ATTACH_FIXTURES)
cuda-fixtures: $(GPU_ATTACH_FIXTURES)
FAKE_CUDA_CFLAGS := -O2 -g $(WARN) -isystem $(CUDA_HOME)/include -fPIC -fno-ipa-icf

$(BUILD)/tests/cuda/fake_libcuda-plain.o: tests/cuda/fake_libcuda.c
	@mkdir -p $(@D)
	$(CC) $(FAKE_CUDA_CFLAGS) -c $< -o $@

$(BUILD)/tests/cuda/fake_libcuda-pt.o: tests/cuda/fake_libcuda.c
	@mkdir -p $(@D)
	$(CC) $(FAKE_CUDA_CFLAGS) -DFAKE_PER_THREAD -DCUDA_API_PER_THREAD_DEFAULT_STREAM -c $< -o $@

$(BUILD)/tests/cuda/libcuda.so.1: $(BUILD)/tests/cuda/fake_libcuda-plain.o \
				  $(BUILD)/tests/cuda/fake_libcuda-pt.o
	$(CC) -shared -Wl,-soname,libcuda.so.1 -o $@ $^

# with the region runtime built in (unsanitized, as the program a user builds), linked to the
# stand-in as a CUDA program is to the driver (-lcuda), found beside it (rpath $ORIGIN)
$(BUILD)/tests/cuda/attach_host: tests/cuda/attach_host.c runtime/perch.c include/perch.h \
				 include/perch_abi.h $(BUILD)/tests/cuda/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) -O2 -g $(WARN) -fno-omit-frame-pointer -isystem $(CUDA_HOME)/include -Iinclude \
		-o $@ $< runtime/perch.c -L$(@D) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' -pthread
endif
