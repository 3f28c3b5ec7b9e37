# bpf/: the XDP balancer, the backend-side decap program and the benchmark
# wrapper, compiled with clang and wrapped in bpftool skeletons in build/.
BPF_ARCH_INC := /usr/include/$(shell $(CC) -print-multiarch)
BPF_CFLAGS := -target bpf -O2 -g -Wall -Werror -Iinclude -Ibpf -I$(BPF_ARCH_INC) $(BPF_EXTRA_CFLAGS)
BPF_PROGS := maglev_xdp maglev_decap maglev_bench
BPF_HDRS := $(wildcard bpf/*.h) include/maglev_maps.h include/maglev_hash.h include/maglev_conn.h include/maglev_second.h include/maglev_gue.h include/maglev_decap.h include/maglev_bench.h include/maglev_bounded.h include/maglev_hot.h
BPF_OBJS := $(BPF_PROGS:%=$(BUILD)/bpf/%.bpf.o)
BPF_SKELS := $(BPF_PROGS:%=$(BUILD)/%.skel.h)

ALL_TARGETS += $(BPF_OBJS) $(BPF_SKELS)

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c -o $@ $<

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $* > $@.tmp
	@mv $@.tmp $@

# userspace/lib/lib.mk builds every lib object; the datapath's (dp_priv.h)
# need the skeleton.
DP_SKEL_OBJS := dp_load dp_attach dp_vips dp_tables dp_stats dp_conns
DP_SKEL_OBJS += dp_if_l2 dp_hot
$(DP_SKEL_OBJS:%=$(BUILD)/lib/%.o): | $(BUILD)/maglev_xdp.skel.h
