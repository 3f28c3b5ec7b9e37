# Health-check CPU (make bench): 10,000 HTTP checks a second on libcurl side by
# side with the hand-written client of an older commit, and HTTPS
# (health_bench.sh); hc_bench_server is their backend.
ALL_TARGETS += $(BUILD)/bench/hc_bench_server
BENCHES += userspace/bench/health_bench.sh

$(BUILD)/bench/hc_bench_server: userspace/bench/hc_bench_server.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lssl -lcrypto
