# Update-latency benchmark (make bench): maglevctl change -> live table, for a
# VIP of 1,000 backends, against a real maglevd. Writes update_ms_n1000.
ALL_TARGETS += $(BUILD)/bench/update_bench
BENCHES += $(BUILD)/bench/update_bench

$(BUILD)/bench/update_bench: userspace/bench/update_bench.c userspace/bench/bench_clock.h $(BUILD)/libmaglev.a | $(BUILD)/maglevd
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libmaglev.a -lbpf -lelf -lz -ljson-c
