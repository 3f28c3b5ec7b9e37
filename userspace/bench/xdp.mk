# XDP balancer benchmark (make bench): ns/packet per path, see xdp_bench.c.
ALL_TARGETS += $(BUILD)/bench/xdp_bench
BENCHES += $(BUILD)/bench/xdp_bench
# Side by side with a stripped balancer (stripped.patch): builds its own copy.
BENCHES += userspace/bench/stripped_bench.sh

$(BUILD)/bench/xdp_bench: userspace/bench/xdp_bench.c selftests/xdp/pkt.h include/maglev_bench.h \
		userspace/bench/bench_clock.h userspace/bench/decap_bench.h $(BUILD)/libmaglev.a \
		$(BUILD)/maglev_bench.skel.h $(BUILD)/maglev_decap.skel.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iselftests/xdp -Ibpf -o $@ $< $(BUILD)/libmaglev.a -lbpf -lelf -lz -ljson-c
# The established cases side by side with an older commit's build (issue 14).
BENCHES += userspace/bench/established_vs_ref.sh
