# maglevctl: the operator CLI (see docs/operations.md).
MAGLEVCTL_SRCS := $(wildcard userspace/maglevctl/*.c)
MAGLEVCTL_OBJS := $(patsubst userspace/maglevctl/%.c,$(BUILD)/maglevctl-obj/%.o,$(MAGLEVCTL_SRCS))

ALL_TARGETS += $(BUILD)/maglevctl

$(BUILD)/maglevctl-obj/%.o: userspace/maglevctl/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

# Only the protocol code, the health-check field table and the JSON
# getters: maglevctl needs neither libbpf nor the skeleton.
MAGLEVCTL_LIB := $(BUILD)/lib/ctl_proto.o $(BUILD)/lib/hc_fields.o $(BUILD)/lib/json_get.o
$(BUILD)/maglevctl: $(MAGLEVCTL_OBJS) $(MAGLEVCTL_LIB)
	$(CC) $(CFLAGS) -o $@ $(MAGLEVCTL_OBJS) $(MAGLEVCTL_LIB) -ljson-c

-include $(MAGLEVCTL_OBJS:.o=.d)
