# Maglev table builder benchmark (make bench): build time, speed against the
# paper's pseudocode, disruption and balance.
ALL_TARGETS += $(BUILD)/bench/table_bench
BENCHES += $(BUILD)/bench/table_bench

$(BUILD)/bench/table_bench: userspace/bench/table_bench.c userspace/bench/bench_clock.h $(BUILD)/libmaglev.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libmaglev.a -ljson-c
