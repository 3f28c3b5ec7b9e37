# Connection-table census benchmark (make bench): census time by table size,
# the interval bounded loads' loads are refreshed at (census_bench.c).
ALL_TARGETS += $(BUILD)/bench/census_bench
BENCHES += $(BUILD)/bench/census_bench

$(BUILD)/bench/census_bench: userspace/bench/census_bench.c userspace/bench/bench_clock.h $(BUILD)/libmaglev.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libmaglev.a -lbpf -lelf -lz -ljson-c
