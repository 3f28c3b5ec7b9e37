# Health-check CPU (make bench): 10,000 HTTP checks a second on this tree's
# built-in client side by side with an older commit's, and HTTPS (libcurl)
# against HTTP at 1,000 a second (health_bench.sh); hc_bench_server is
# their backend.
ALL_TARGETS += $(BUILD)/bench/hc_bench_server
BENCHES += userspace/bench/health_bench.sh

$(BUILD)/bench/hc_bench_server: userspace/bench/hc_bench_server.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lssl -lcrypto
