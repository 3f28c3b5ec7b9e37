# The version maglevd and maglevctl print (--version, maglevctl status):
# build/version.h, from scripts/version, regenerated on every make but only
# rewritten when the version changed, so an unchanged tree rebuilds nothing.
VERSION_H := $(BUILD)/version.h

.PHONY: version-force dist
version-force:

$(VERSION_H): version-force
	@mkdir -p $(@D)
	@echo "#define MAGLEV_VERSION \"$$(scripts/version)\"" > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

# First build: the .d files name version.h only once the objects exist.
$(BUILD)/maglevd-obj/core/main.o $(BUILD)/maglevd-obj/ctl/req_queries.o \
	$(BUILD)/maglevd-obj/fleet/fleet.o $(BUILD)/maglevd-obj/metrics/metrics_snap.o \
	$(BUILD)/maglevctl-obj/main.o $(BUILD)/fuzz/ctl-obj/maglevd/ctl/req_queries.o \
	$(BUILD)/fuzz/ctl-obj/maglevd/fleet/fleet.o: | $(VERSION_H)

# make dist: build/maglev-lb-VERSION.tar.gz, the committed tree (HEAD) plus
# a VERSION file (HEAD's version, never -dirty), which scripts/version
# reads where there is no .git.
dist:
	@mkdir -p $(BUILD)
	@v=$$(scripts/version --head); \
	git archive --prefix=maglev-lb-$$v/ --add-virtual-file=maglev-lb-$$v/VERSION:"$$v" \
		-o $(BUILD)/maglev-lb-$$v.tar.gz HEAD && echo $(BUILD)/maglev-lb-$$v.tar.gz
