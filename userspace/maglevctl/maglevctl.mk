# maglevctl: the operator CLI (see docs/operations.md).
MAGLEVCTL_SRCS := $(wildcard userspace/maglevctl/*.c)
MAGLEVCTL_OBJS := $(patsubst userspace/maglevctl/%.c,$(BUILD)/maglevctl-obj/%.o,$(MAGLEVCTL_SRCS))

ALL_TARGETS += $(BUILD)/maglevctl

$(BUILD)/maglevctl-obj/%.o: userspace/maglevctl/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

# Only the protocol code: maglevctl needs neither libbpf nor the skeleton.
$(BUILD)/maglevctl: $(MAGLEVCTL_OBJS) $(BUILD)/lib/ctl_proto.o
	$(CC) $(CFLAGS) -o $@ $(MAGLEVCTL_OBJS) $(BUILD)/lib/ctl_proto.o -ljson-c

-include $(MAGLEVCTL_OBJS:.o=.d)
