# Maglev table builder tests (issue 2): kselftest harness, KTAP output.
TABLE_TEST := $(BUILD)/selftests/table/table_test

ALL_TARGETS += $(TABLE_TEST)
TESTS += $(TABLE_TEST)
VM_TESTS += $(TABLE_TEST)

$(TABLE_TEST): selftests/table/table_test.c selftests/table/table_ref.h $(BUILD)/libmaglev.a $(KSELFTEST_H)
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $< $(BUILD)/libmaglev.a

# The ring and rendezvous placements (issue 19).
PLACEMENT_TEST := $(BUILD)/selftests/table/placement_test

ALL_TARGETS += $(PLACEMENT_TEST)
TESTS += $(PLACEMENT_TEST)
VM_TESTS += $(PLACEMENT_TEST)

$(PLACEMENT_TEST): selftests/table/placement_test.c selftests/table/table_ref.h \
		$(BUILD)/libmaglev.a $(KSELFTEST_H)
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $< $(BUILD)/libmaglev.a -lm
