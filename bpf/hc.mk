# bpf/hc.mk: maglev_hc, the TC egress program that sends maglevd's health
# checks through the encapsulation (health_via_encap), and its skeleton for
# userspace/lib/hc_encap.c. Own rules (same pattern as bpf/bpf.mk) so this
# program's flags do not depend on the balancer's.
HC_BPF_CFLAGS := -target bpf -O2 -g -Wall -Werror -Iinclude -Ibpf \
	-I/usr/include/$(shell $(CC) -print-multiarch)

ALL_TARGETS += $(BUILD)/bpf/maglev_hc.bpf.o $(BUILD)/maglev_hc.skel.h

$(BUILD)/bpf/maglev_hc.bpf.o: bpf/maglev_hc.bpf.c include/maglev_hc.h include/maglev_maps.h \
		bpf/xdp_cfg_maps.h
	@mkdir -p $(@D)
	$(CLANG) $(HC_BPF_CFLAGS) -c -o $@ $<

$(BUILD)/maglev_hc.skel.h: $(BUILD)/bpf/maglev_hc.bpf.o
	$(BPFTOOL) gen skeleton $< name maglev_hc > $@.tmp
	@mv $@.tmp $@

$(BUILD)/lib/hc_encap.o: | $(BUILD)/maglev_hc.skel.h
