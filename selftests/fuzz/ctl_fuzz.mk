# Control-input fuzzing (docs/fuzzing.md, "Control-input fuzzing"): libFuzzer
# targets, built with clang and ASan + UBSan, over the daemon's own parsers:
#   ctl_fuzz_request  one control-socket request line (ctl_handle)
#   ctl_fuzz_config   the maglevd -c configuration file (config_parse)
#   ctl_fuzz_state    the state file read at start (state_parse)
# The daemon's sources are compiled again with coverage instrumentation into
# build/fuzz/ctl-obj/; only the BPF datapath and the event loop are replaced
# (selftests/fuzz/ctl_fuzz_dp.c). selftests/fuzz/run_ctl_fuzz.sh replays the
# committed corpus, then fuzzes for a share of MAGLEV_FUZZ_SECONDS.
CTL_FUZZ_DIR := $(BUILD)/fuzz
CTL_FUZZ_OBJDIR := $(CTL_FUZZ_DIR)/ctl-obj
CTL_FUZZ_TARGETS := request config state
CTL_FUZZ_BINS := $(CTL_FUZZ_TARGETS:%=$(CTL_FUZZ_DIR)/ctl_fuzz_%)

CTL_FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
CTL_FUZZ_CFLAGS = $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(CFLAGS)) \
	$(CTL_FUZZ_SAN) -Iuserspace/maglevd -Iselftests/fuzz
CTL_FUZZ_LIBS := -ljson-c -lmnl -lbpf -lelf -lz -lpthread -lcurl -lm

# The daemon's code under test: everything but main.c (event loop, commit),
# the control and metrics servers, and what only talks to the kernel.
CTL_FUZZ_DAEMON := ctl/requests ctl/req_args ctl/req_changes ctl/req_queries ctl/ctl_commit ctl/flows_guard \
	model/registry model/vip_sync model/balance datapath/registry_writer core/config model/state \
	core/log core/durable datapath/table_swap \
	datapath/slowpath health/health health/health_verdicts health/health_changes health/hc_udp health/hc_https health/hc_body \
	announce/announce core/rtnl ctl/audit model/be_state metrics/status metrics/labels datapath/flow_count \
	datapath/drift datapath/readback fleet/fleet fleet/fleet_health fleet/etcd_client core/stream \
	datapath/second_chance datapath/bounded model/admit health/settle health/damping health/admission hot/hot_flows
CTL_FUZZ_LIB := ctl_proto maglev_table maglev_table_plan maglev_table_naive placement \
	placement_ring placement_rendezvous slowpath_nl hc_encap \
	dp_names conn_census \
	hc_fields \
	json_get
CTL_FUZZ_HARNESS := ctl_fuzz_dp ctl_fuzz_oracle
CTL_FUZZ_OBJS := $(CTL_FUZZ_DAEMON:%=$(CTL_FUZZ_OBJDIR)/maglevd/%.o) \
	$(CTL_FUZZ_LIB:%=$(CTL_FUZZ_OBJDIR)/lib/%.o) \
	$(CTL_FUZZ_HARNESS:%=$(CTL_FUZZ_OBJDIR)/fuzz/%.o)

ALL_TARGETS += $(CTL_FUZZ_BINS)
TESTS += selftests/fuzz/run_ctl_fuzz.sh
FUZZ_RUNS += selftests/fuzz/run_ctl_fuzz.sh

$(CTL_FUZZ_OBJDIR)/maglevd/%.o: userspace/maglevd/%.c
	@mkdir -p $(@D)
	$(CLANG) $(CTL_FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(CTL_FUZZ_OBJDIR)/lib/%.o: userspace/lib/%.c
	@mkdir -p $(@D)
	$(CLANG) $(CTL_FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(CTL_FUZZ_OBJDIR)/lib/hc_encap.o: | $(BUILD)/maglev_hc.skel.h

# The harness itself is not instrumented for coverage: it would only add
# edges that say nothing about the parsers.
$(CTL_FUZZ_OBJDIR)/fuzz/%.o: selftests/fuzz/%.c
	@mkdir -p $(@D)
	$(CLANG) $(CTL_FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

$(CTL_FUZZ_DIR)/ctl_fuzz_%: $(CTL_FUZZ_OBJDIR)/fuzz/ctl_fuzz_%.o $(CTL_FUZZ_OBJS)
	$(CLANG) $(CTL_FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(CTL_FUZZ_LIBS)

-include $(CTL_FUZZ_OBJS:.o=.d) $(CTL_FUZZ_TARGETS:%=$(CTL_FUZZ_OBJDIR)/fuzz/ctl_fuzz_%.d)
# Objects reached through pattern rules only: keep them between builds.
.SECONDARY: $(CTL_FUZZ_OBJS) $(CTL_FUZZ_TARGETS:%=$(CTL_FUZZ_OBJDIR)/fuzz/ctl_fuzz_%.o)

# The same hostile input against a running daemon on its socket, and
# maglevctl restore with malformed files (needs root and namespaces).
TESTS += selftests/daemon/daemon_hostile.sh
