# Man pages: maglevd(8), maglevctl(8), maglevd.conf(5), written in man(7) in
# docs/man/*.in. They are the reference for the options, commands and config
# keys (docs/operations.md points to them). make writes them into build/man/
# with the version (build/version.h) and a date filled in: SOURCE_DATE_EPOCH
# when set (dpkg-buildpackage sets it), else the last commit's, so the same
# tree gives the same pages. selftests/packaging/man_pages.sh lints them.
MAN_PAGES := $(patsubst docs/man/%.in,$(BUILD)/man/%,$(wildcard docs/man/*.in))
MAN_DATE := $(shell d=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null)}; \
	date -u -d "@$${d:-$$(date +%s)}" +%Y-%m-%d)

ALL_TARGETS += $(MAN_PAGES)

# version.h by its literal name: packaging/version.mk is read after this file.
$(BUILD)/man/%: docs/man/%.in $(BUILD)/version.h
	@mkdir -p $(@D)
	sed -e "s/@VERSION@/$$(sed -n 's/.*"\(.*\)".*/\1/p' $(BUILD)/version.h)/" \
		-e "s/@DATE@/$(MAN_DATE)/" $< > $@
