# maglev-lb top-level build. Each component keeps its rules in a *.mk
# fragment next to its sources; this file only wires them together.
#
#   make          build everything
#   make deps     install build/test dependencies from Debian (idempotent)
#   make check    the whole test suite; ends with "N passed, N failed"
#   make bench    benchmarks; human table + build/bench.json
#   make demo     the walkthrough (see README.md)

BUILD := build
CC := gcc
CLANG := clang
BPFTOOL := bpftool
KSRC_TAR := /usr/src/linux-source-6.1.tar.xz

CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	-D_GNU_SOURCE -Iinclude -Iuserspace/lib -I$(BUILD)
LDLIBS :=

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

.PHONY: all deps check bench demo clean format
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

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C kernel clean 2>/dev/null

format:
	clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^kernel/')
