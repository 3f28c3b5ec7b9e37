# Maglev table builder benchmark (make bench): build time, speed against the
# paper's pseudocode, disruption and balance; every placement side by side.
ALL_TARGETS += $(BUILD)/bench/table_bench
BENCHES += $(BUILD)/bench/table_bench

$(BUILD)/bench/table_bench: userspace/bench/table_bench.c userspace/bench/placement_bench.c \
		userspace/bench/placement_bench.h userspace/bench/bench_clock.h $(BUILD)/libmaglev.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ userspace/bench/table_bench.c userspace/bench/placement_bench.c \
		$(BUILD)/libmaglev.a -ljson-c
