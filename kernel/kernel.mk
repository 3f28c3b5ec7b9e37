# The slow-path kernel module, built against Debian's 6.1 headers into
# build/kernel/ (see kernel/Makefile), and its style check.
KMOD := $(BUILD)/kernel/maglev_slowpath.ko
# The kernel Debian's linux-image-amd64 metapackage currently installs (the
# one the VM boots), e.g. 6.1.0-57-amd64: its ABI number changes with updates.
KMOD_KVER := $(shell dpkg-query -W -f='$${Depends}' linux-image-amd64 2>/dev/null | \
	sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')

.PHONY: kmod
kmod: $(KMOD)

$(KMOD): $(wildcard kernel/*.c kernel/*.h kernel/Kbuild include/*.h)
	@if [ -d /lib/modules/$(KMOD_KVER)/build ]; then \
		mkdir -p $(BUILD) && flock $(BUILD)/.kmod.lock \
			$(MAKE) --no-print-directory -C kernel KVER=$(KMOD_KVER); \
	else \
		echo "kernel: no headers for $(KMOD_KVER), module not built (make deps)"; \
	fi

ALL_TARGETS += $(KMOD)
# checkpatch.pl --strict over the module sources, as a TAP test.
TESTS += kernel/checkpatch-test
