# selftests/hardening (issue 7): flow-hash attacks under a known and an
# unknown seed, a connection-table flood through the real XDP program, and
# maglevd's VIP/backend limits.
HARDENING_C_TESTS := hash_attack_test conn_flood_test
HARDENING_BINS := $(HARDENING_C_TESTS:%=$(BUILD)/selftests/hardening/%)

ALL_TARGETS += $(HARDENING_BINS)
TESTS += $(HARDENING_BINS) selftests/hardening/limits_test.sh

$(BUILD)/selftests/hardening/hash_attack_test: selftests/hardening/hash_attack_test.c \
		include/maglev_hash.h include/maglev_conn.h $(BUILD)/libmaglev.a $(KSELFTEST_H)
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $< $(BUILD)/libmaglev.a -lm

$(BUILD)/selftests/hardening/conn_flood_test: selftests/hardening/conn_flood_test.c \
		selftests/xdp/fixture.h selftests/xdp/pkt.h $(BUILD)/libmaglev.a \
		$(BUILD)/maglev_bench.skel.h include/maglev_bench.h $(KSELFTEST_H)
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -Iselftests/xdp -o $@ $< $(BUILD)/libmaglev.a -lbpf -lelf -lz
