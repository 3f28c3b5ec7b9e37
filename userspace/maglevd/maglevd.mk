# maglevd: the control-plane daemon (see docs/operations.md). One folder per
# subsystem (userspace/maglevd/README.md); includes name the folder
# ("core/daemon.h"), so who calls whom shows in each file's includes.
MAGLEVD_DIR := userspace/maglevd
MAGLEVD_SRCS := $(wildcard $(MAGLEVD_DIR)/*/*.c)
MAGLEVD_OBJS := $(patsubst $(MAGLEVD_DIR)/%.c,$(BUILD)/maglevd-obj/%.o,$(MAGLEVD_SRCS))
MAGLEVD_LIBS := -lbpf -lelf -lz -ljson-c -lmnl -lsystemd -lpthread -lcurl -lm -lmicrohttpd -lyaml \
	-lcrypt

ALL_TARGETS += $(BUILD)/maglevd

$(BUILD)/maglevd-obj/%.o: $(MAGLEVD_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -I$(MAGLEVD_DIR) -MMD -MP -c -o $@ $<

$(BUILD)/maglevd: $(MAGLEVD_OBJS) $(BUILD)/libmaglev.a
	$(CC) $(CFLAGS) -o $@ $(MAGLEVD_OBJS) $(BUILD)/libmaglev.a $(MAGLEVD_LIBS)

-include $(MAGLEVD_OBJS:.o=.d)
