# maglev-lb top-level build. Each component keeps its rules in a *.mk
# fragment next to its sources; this file only wires them together.
#
#   make          build everything
#   make deps     install build/test dependencies from Debian (idempotent)
#   make check    the whole test suite; ends with "N passed, N failed"
#   make bench    benchmarks; human table + build/bench.json
#   make demo     the walkthrough (see README.md)
#   make fuzz     the fuzzers for FUZZ_SECONDS each (corpus kept in selftests/fuzz)

BUILD := build
CC := gcc
CLANG := clang
BPFTOOL := bpftool
KSRC_TAR := /usr/src/linux-source-6.1.tar.xz

CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	-D_GNU_SOURCE -Iinclude -Iuserspace/lib -I$(BUILD)
LDLIBS :=

# make ... SANITIZE=1: userspace built with AddressSanitizer + UBSan (any
# finding aborts the program). selftests/sanitize runs the userspace tests so.
ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
endif

# make ... LAYOUT_VARIANT=1: maps of another layout (include/maglev_maps.h),
# the other side of the upgrade test (selftests/daemon/daemon_upgrade.sh).
ifeq ($(LAYOUT_VARIANT),1)
CFLAGS += -DMAGLEV_LAYOUT_VARIANT
BPF_EXTRA_CFLAGS += -DMAGLEV_LAYOUT_VARIANT
endif

# The kselftest harness and checkpatch.pl, extracted from linux-source-6.1
# by selftests/selftests.mk; defined here because fragments are read in path
# order and several use these in prerequisites.
KSRC := $(BUILD)/ksrc
KSELFTEST_H := $(KSRC)/tools/testing/selftests/kselftest_harness.h

# Fragments append to these.
ALL_TARGETS :=
TESTS :=
# Tests that also run inside the qemu VM on Debian's 6.1 kernel (make vm-test).
VM_TESTS :=
BENCHES :=
# Fuzzing programs: run for MAGLEV_FUZZ_SECONDS each (short in make check,
# longer with make fuzz).
FUZZ_RUNS :=
FUZZ_SECONDS := 600

.PHONY: all deps check bench demo fuzz clean format
all: all-targets

include $(sort $(wildcard */*.mk */*/*.mk))

all-targets: $(ALL_TARGETS)

deps:
	@scripts/install-deps

check: deps
	@$(MAKE) --no-print-directory all
	@selftests/run $(TESTS)

bench: deps
	@$(MAKE) --no-print-directory all
	@scripts/bench $(BUILD)/bench.json $(BENCHES)

fuzz: deps
	@$(MAKE) --no-print-directory all
	@MAGLEV_FUZZ_SECONDS=$(FUZZ_SECONDS) selftests/run $(FUZZ_RUNS)

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C kernel clean 2>/dev/null

format:
	clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^kernel/')
