# Tests of the slow-path kernel module. They need the module loaded, so they
# run only inside the 6.1 VM (scripts/vm-run), not on the host.
KMOD_TEST_DIR := $(BUILD)/selftests/kmod
KMOD_TESTS := $(KMOD_TEST_DIR)/kmod_netlink $(KMOD_TEST_DIR)/kmod_forward \
	$(KMOD_TEST_DIR)/kmod_xdp_diff $(KMOD_TEST_DIR)/kmod_unload
KMOD_TESTS += $(KMOD_TEST_DIR)/kmod_nl_fuzz $(KMOD_TEST_DIR)/kmod_second
KMOD_TESTS += $(KMOD_TEST_DIR)/kmod_bounded $(KMOD_TEST_DIR)/kmod_too_big
KMOD_TESTS += $(KMOD_TEST_DIR)/kmod_xdp_fou
KMOD_TEST_DEPS := selftests/kmod/kmod_util.h selftests/kmod/kmod_pkt.h \
	userspace/lib/slowpath_nl.c userspace/lib/slowpath_nl.h \
	include/maglev_genl.h include/maglev_gue.h include/maglev_hash.h include/maglev_maps.h $(KSELFTEST_H)
KMOD_TEST_DEPS += selftests/kmod/kmod_topo.h
KMOD_TEST_DEPS += include/maglev_bounded.h

$(KMOD_TEST_DIR)/%: selftests/kmod/%.c $(KMOD_TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $< userspace/lib/slowpath_nl.c -lmnl -lpthread

# The netlink fuzzer is one program of several files (selftests/kmod/nl_fuzz/,
# the tests in kmod_nl_fuzz.c there): all of them compiled together, rebuilt
# when any of its sources or headers changes.
KMOD_NL_FUZZ_SRCS := $(wildcard selftests/kmod/nl_fuzz/*.c)
KMOD_NL_FUZZ_HDRS := $(wildcard selftests/kmod/nl_fuzz/*.h)
$(KMOD_TEST_DIR)/kmod_nl_fuzz: $(KMOD_NL_FUZZ_SRCS) $(KMOD_NL_FUZZ_HDRS) $(KMOD_TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -Iselftests/kmod -o $@ $(KMOD_NL_FUZZ_SRCS) \
		userspace/lib/slowpath_nl.c -lmnl -lpthread

# Module against XDP program, and XDP's frames into the kernel's fou: the
# XDP tests' fixture and the datapath library (libmaglev.a, which also
# holds slowpath_nl.o).
$(KMOD_TEST_DIR)/kmod_xdp_diff $(KMOD_TEST_DIR)/kmod_xdp_fou: $(KMOD_TEST_DIR)/%: \
		selftests/kmod/%.c $(KMOD_TEST_DEPS) \
		selftests/xdp/fixture.h selftests/xdp/pkt.h $(BUILD)/libmaglev.a
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -Iselftests/xdp -o $@ $< $(BUILD)/libmaglev.a \
		-lbpf -lelf -lz -lmnl -lpthread

ALL_TARGETS += $(KMOD_TESTS)
VM_TESTS += $(KMOD_TESTS)

# The client library's encoding (table push with previous owners, LOOKUP),
# against a fake netlink peer in the test itself: a host-side test.
ALL_TARGETS += $(KMOD_TEST_DIR)/slowpath_nl_encode
TESTS += $(KMOD_TEST_DIR)/slowpath_nl_encode

# vm-run's clean-up of a failed initramfs build: a host-side test.
TESTS += selftests/kmod/vm_run_cleanup
