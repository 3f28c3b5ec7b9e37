# Maglev table builder tests (issue 2): kselftest harness, KTAP output.
TABLE_TEST := $(BUILD)/selftests/table/table_test

ALL_TARGETS += $(TABLE_TEST)
TESTS += $(TABLE_TEST)
VM_TESTS += $(TABLE_TEST)

$(TABLE_TEST): selftests/table/table_test.c selftests/table/table_ref.h $(BUILD)/libmaglev.a $(KSELFTEST_H)
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $< $(BUILD)/libmaglev.a

# The ring and rendezvous placements (issue 19). Userspace only, so not in
# VM_TESTS: the kernel plays no part, and under TCG its builds would take
# minutes of the VM's budget.
PLACEMENT_TEST := $(BUILD)/selftests/table/placement_test

ALL_TARGETS += $(PLACEMENT_TEST)
TESTS += $(PLACEMENT_TEST)

$(PLACEMENT_TEST): selftests/table/placement_test.c selftests/table/table_ref.h \
		$(BUILD)/libmaglev.a $(KSELFTEST_H)
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $< $(BUILD)/libmaglev.a -lm
