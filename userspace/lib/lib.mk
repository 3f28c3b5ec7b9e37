# userspace/lib: every .c file in this directory is compiled into
# build/libmaglev.a, so adding a library file needs no edit here.
#
# Linking: name $(BUILD)/libmaglev.a literally in your fragment (fragments are
# included in path order, so variables set here may not be defined yet when
# yours is read) and add the libraries your objects need (-lbpf, -lmnl, ...).
# A file that includes a generated header (e.g. a bpftool skeleton) adds an
# order-only prerequisite in its own fragment, and may set extra flags the
# same way:
#   $(BUILD)/lib/dp_load.o: | $(BUILD)/maglev_lb.skel.h
#   $(BUILD)/lib/dp_load.o: CFLAGS += -DFOO
# Header dependencies are tracked with -MMD, so a changed header rebuilds.
LIB_SRCS := $(wildcard userspace/lib/*.c)
LIB_OBJS := $(patsubst userspace/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))

ALL_TARGETS += $(BUILD)/libmaglev.a

$(BUILD)/lib/%.o: userspace/lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -I$(BUILD) -MMD -MP -c -o $@ $<

$(BUILD)/libmaglev.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

-include $(LIB_OBJS:.o=.d)
