# Maglev table builder tests (issue 2): kselftest harness, KTAP output.
TABLE_TEST := $(BUILD)/selftests/table/table_test

ALL_TARGETS += $(TABLE_TEST)
TESTS += $(TABLE_TEST)
VM_TESTS += $(TABLE_TEST)

$(TABLE_TEST): selftests/table/table_test.c $(BUILD)/libmaglev.a $(KSELFTEST_H)
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $< $(BUILD)/libmaglev.a
