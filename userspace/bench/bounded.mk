# Bounded loads' balance benchmark (make bench): max/mean live flows with and
# without a balance factor, spill share, through the datapath (bounded_bench.c).
ALL_TARGETS += $(BUILD)/bench/bounded_bench
BENCHES += $(BUILD)/bench/bounded_bench

$(BUILD)/bench/bounded_bench: userspace/bench/bounded_bench.c selftests/xdp/pkt.h $(BUILD)/libmaglev.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iselftests/xdp -o $@ $< $(BUILD)/libmaglev.a -lbpf -lelf -lz -ljson-c
