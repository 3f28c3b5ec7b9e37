# selftests/sanitize (issue 7, sanitizers): the userspace tests run a second
# time against a build with AddressSanitizer + UBSan + LeakSanitizer in
# build/san (clang: see sanitized_userspace.sh for why), and valgrind's leak
# check of maglevctl and maglevd (built without sanitizers, in build/).
TESTS += selftests/sanitize/sanitized_userspace.sh selftests/sanitize/valgrind.sh

# The tests run again sanitized: every userspace test of TESTS (C programs
# under $(BUILD)/selftests/, the daemon, end-to-end and hardening scripts),
# so not the kernel module's checks, the VM runner, the fuzz runners (their
# own clang ASan builds) or this directory's programs. Recursive (=/+=) on
# purpose: TESTS is complete only once every fragment is read. A test that
# must not run here can be left out with SAN_SKIP += ... in its fragment.
SAN_TESTS += $(filter-out kernel/% scripts/% selftests/kmod/% selftests/sanitize/% \
	$(FUZZ_RUNS) $(SAN_SKIP),$(TESTS))
# What they run: the daemon, the CLI, the e2e servers and clients, and the
# BPF objects the scripts attach with ip(8).
SAN_TARGETS = $(BUILD)/maglevd $(BUILD)/maglevctl $(TOOLS) $(TOOLS_XDP_PASS) $(MAGLEV_DECAP_TOOL) \
	$(BUILD)/bpf/maglev_decap.bpf.o $(filter $(BUILD)/%,$(SAN_TESTS))

# Used by sanitized_userspace.sh as
#   make BUILD=build/san SANITIZE=1 CC=clang sanitize-build print-sanitize-tests
# SAN_TARGETS goes to a sub-make, not into prerequisites: those would be
# expanded while this fragment is read, before later fragments add tests.
.PHONY: sanitize-build print-sanitize-tests
sanitize-build:
	@$(MAKE) --no-print-directory $(SAN_TARGETS)

print-sanitize-tests:
	@echo $(SAN_TESTS)
