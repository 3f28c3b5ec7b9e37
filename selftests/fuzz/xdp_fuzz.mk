# Packet fuzzing (docs/fuzzing.md, "Packet fuzzing"): a libFuzzer target that
# runs every input as a frame through the real XDP balancer with
# BPF_PROG_TEST_RUN and checks it with an oracle (selftests/fuzz/xdp_fuzz.c).
# Built with clang, ASan + UBSan, into build/fuzz/xdp_fuzz; the datapath
# library is compiled again with the same sanitizers (not the gcc build, so
# SANITIZE=1 does not mix two ASan runtimes). selftests/fuzz/run_xdp_fuzz.sh
# replays the committed corpus, then fuzzes for MAGLEV_FUZZ_SECONDS.
#
#   make xdp-fuzz-seeds   regenerate selftests/fuzz/corpus/xdp/ seeds
#   make fuzz-merge       add the inputs of build/fuzz/xdp/corpus that bring
#                         new coverage to the committed corpus
XDP_FUZZ := $(BUILD)/fuzz/xdp_fuzz
XDP_FUZZ_OBJDIR := $(BUILD)/fuzz/xdp-obj
XDP_FUZZ_CORPUS := selftests/fuzz/corpus/xdp
XDP_FUZZ_CFLAGS = -O1 -g -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE \
	-Iinclude -Iuserspace/lib -I$(BUILD) -Iselftests/xdp -Iselftests/fuzz \
	-I$(KSRC)/tools/testing/selftests \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
XDP_FUZZ_LIB := bpffs dp_load dp_attach dp_vips dp_tables dp_stats dp_conns dp_layout dp_names \
	maglev_table maglev_table_plan \
	dp_if_l2
XDP_FUZZ_OBJS := $(XDP_FUZZ_LIB:%=$(XDP_FUZZ_OBJDIR)/lib/%.o) \
	$(XDP_FUZZ_OBJDIR)/xdp_fuzz.o $(XDP_FUZZ_OBJDIR)/xdp_fuzz_seeds.o

ALL_TARGETS += $(XDP_FUZZ)
TESTS += selftests/fuzz/run_xdp_fuzz.sh
FUZZ_RUNS += selftests/fuzz/run_xdp_fuzz.sh

$(XDP_FUZZ_OBJDIR)/lib/%.o: userspace/lib/%.c | $(BUILD)/maglev_xdp.skel.h
	@mkdir -p $(@D)
	$(CLANG) $(XDP_FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

# The harness is instrumented for coverage: its oracle's branches (which
# encapsulation, which VLAN depth, ...) are signal about the program too.
$(XDP_FUZZ_OBJDIR)/%.o: selftests/fuzz/%.c $(KSELFTEST_H) | $(BUILD)/maglev_xdp.skel.h
	@mkdir -p $(@D)
	$(CLANG) $(XDP_FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(XDP_FUZZ): $(XDP_FUZZ_OBJS)
	$(CLANG) $(XDP_FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ -lbpf -lelf -lz

-include $(XDP_FUZZ_OBJS:.o=.d)
.SECONDARY: $(XDP_FUZZ_OBJS)

.PHONY: xdp-fuzz-seeds xdp-fuzz-merge fuzz-merge
xdp-fuzz-seeds: $(XDP_FUZZ)
	rm -f $(XDP_FUZZ_CORPUS)/seed-*
	@mkdir -p $(XDP_FUZZ_CORPUS)
	MAGLEV_XDP_FUZZ_GEN=$(XDP_FUZZ_CORPUS) $(XDP_FUZZ)

xdp-fuzz-merge: $(XDP_FUZZ)
	@mkdir -p $(BUILD)/fuzz/xdp/corpus
	$(XDP_FUZZ) -merge=1 -max_len=1600 $(XDP_FUZZ_CORPUS) $(BUILD)/fuzz/xdp/corpus

fuzz-merge: xdp-fuzz-merge
