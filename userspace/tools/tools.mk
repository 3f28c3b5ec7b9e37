# Real servers and clients for the end-to-end tests and the demo
# (selftests/e2e/, scripts/demo): each answer names the backend that served it.
TOOLS_DIR := $(BUILD)/tools
TOOLS := $(TOOLS_DIR)/backend-server $(TOOLS_DIR)/flow-client $(TOOLS_DIR)/longconn
ALL_TARGETS += $(TOOLS)

$(TOOLS_DIR)/backend-server: userspace/tools/backend_server.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $<

$(TOOLS_DIR)/flow-client: userspace/tools/flow_client.c userspace/tools/addrlist.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $<

$(TOOLS_DIR)/longconn: userspace/tools/longconn.c userspace/tools/addrlist.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $<

# XDP_PASS program for the router's side of a balancer's veth (see the file).
TOOLS_XDP_PASS := $(TOOLS_DIR)/xdp_pass.bpf.o
ALL_TARGETS += $(TOOLS_XDP_PASS)
$(TOOLS_XDP_PASS): userspace/tools/xdp_pass.bpf.c
	@mkdir -p $(@D)
	$(CLANG) -target bpf -O2 -g -Wall -Werror -I/usr/include/$(shell $(CC) -print-multiarch) -c -o $@ $<

# The backend side's decap loader (maglev-decap(8)): the decap program as a
# skeleton, attached, pinned and configured (strict mode).
MAGLEV_DECAP_TOOL := $(BUILD)/maglev-decap
ALL_TARGETS += $(MAGLEV_DECAP_TOOL)
$(MAGLEV_DECAP_TOOL): userspace/tools/maglev_decap.c userspace/lib/bpffs.c include/maglev_decap.h \
		$(BUILD)/maglev_decap.skel.h
	$(CC) $(CFLAGS) -Iinclude -I$(BUILD) -o $@ $< userspace/lib/bpffs.c -lbpf -lelf -lz
