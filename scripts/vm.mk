# The qemu VM runner (scripts/vm-run): boots Debian's 6.1 kernel under TCG and
# runs $(VM_TESTS) inside it, with the slow-path module loaded. Part of make
# check; `make vm-test` runs it alone.
.PHONY: vm-test print-vm-tests

# vm-run asks make for the list, so it also works when started by hand.
print-vm-tests:
	@echo $(VM_TESTS)

vm-test: all-targets
	@selftests/run scripts/vm-run

# extract-vmlinux comes from the kernel source with the kselftest headers.
ALL_TARGETS += $(KSELFTEST_H)
TESTS += scripts/vm-run
