# The kselftest harness comes from Debian's linux-source-6.1 package,
# extracted at build time (never copied into the repository), together with
# checkpatch.pl for the kernel module's style check.
KSRC_FILES := tools/testing/selftests/kselftest_harness.h \
	tools/testing/selftests/kselftest.h \
	scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch \
	scripts/extract-vmlinux

$(KSELFTEST_H):
	@mkdir -p $(KSRC)
	tar -xJf $(KSRC_TAR) -C $(KSRC) --strip-components=1 \
		$(addprefix linux-source-6.1/,$(KSRC_FILES))
	@touch $@

SELFTEST_CFLAGS = $(CFLAGS) -I$(KSRC)/tools/testing/selftests -Wno-sign-compare
