# maglevd: the control-plane daemon (see docs/operations.md).
MAGLEVD_SRCS := $(wildcard userspace/maglevd/*.c)
MAGLEVD_OBJS := $(patsubst userspace/maglevd/%.c,$(BUILD)/maglevd-obj/%.o,$(MAGLEVD_SRCS))
MAGLEVD_LIBS := -lbpf -lelf -lz -ljson-c -lmnl -lsystemd -lpthread -lcurl -lm

ALL_TARGETS += $(BUILD)/maglevd

$(BUILD)/maglevd-obj/%.o: userspace/maglevd/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/maglevd: $(MAGLEVD_OBJS) $(BUILD)/libmaglev.a
	$(CC) $(CFLAGS) -o $@ $(MAGLEVD_OBJS) $(BUILD)/libmaglev.a $(MAGLEVD_LIBS)

-include $(MAGLEVD_OBJS:.o=.d)
