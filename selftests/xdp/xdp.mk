# selftests/xdp: the XDP balancer and decap programs driven with
# BPF_PROG_TEST_RUN, output compared byte for byte with packets built here.
XDP_TEST_NAMES := xdp_encap_test xdp_parse_test xdp_icmp_test xdp_conn_test xdp_decap_test \
	xdp_attach_test xdp_bpffs_test xdp_second_test xdp_bounded_test xdp_hot_test
XDP_TEST_BINS := $(XDP_TEST_NAMES:%=$(BUILD)/selftests/xdp/%)
XDP_TEST_HDRS := selftests/xdp/pkt.h selftests/xdp/fixture.h selftests/xdp/decap_cfg.h \
	include/maglev_second.h include/maglev_decap.h

ALL_TARGETS += $(XDP_TEST_BINS)
TESTS += $(XDP_TEST_BINS)
# On Debian's 6.1 in the VM (TCG: every test case's program load is a slow
# verification) the tests whose checks depend on the kernel: the verifier's
# verdict, helpers, maps, sockets. Parsing and encapsulation bytes are the
# same program's arithmetic on both kernels and run on the host only.
VM_TESTS += $(filter-out %/xdp_encap_test %/xdp_parse_test,$(XDP_TEST_BINS))

$(BUILD)/selftests/xdp/%: selftests/xdp/%.c $(XDP_TEST_HDRS) $(BUILD)/libmaglev.a \
		$(BUILD)/maglev_decap.skel.h $(KSELFTEST_H)
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $< $(BUILD)/libmaglev.a -lbpf -lelf -lz -lpthread

# Two CPUs racing on the connection table (through the benchmark wrapper):
# not in the VM tests, whose emulated CPUs are too slow to race.
XDP_RACE_BIN := $(BUILD)/selftests/xdp/xdp_conn_race_test
ALL_TARGETS += $(XDP_RACE_BIN)
TESTS += $(XDP_RACE_BIN)
$(XDP_RACE_BIN): $(BUILD)/maglev_bench.skel.h include/maglev_bench.h

# The hot-flow call site leaves the balancer's structs in registers (clang's
# IR with and without it; compiles only).
TESTS += selftests/xdp/xdp_hot_callsite.sh
SAN_SKIP += selftests/xdp/xdp_hot_callsite.sh
