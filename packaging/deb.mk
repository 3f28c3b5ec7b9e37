# make deb: the Debian packages maglev-lb and maglev-lb-dkms in build/deb/,
# built with dpkg-buildpackage from the make dist tarball of HEAD (so from
# what is committed) and packaging/debian/. The Debian version is the
# project's (scripts/version) made a valid one: a tag v1.2-3-gabc gives
# 1.2.3.gabc; an untagged commit 0~gitDATE.HASH, which sorts by date.
DEB_DIR := $(BUILD)/deb
DEB_MAINT := maglev-lb developers <maglev-lb@example.org>

.PHONY: deb
deb:
	@rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)
	@set -e; tarball=$$($(MAKE) --no-print-directory dist | tail -n1); \
	v=$$(scripts/version --head); \
	case $$v in v[0-9]*) dv=$${v#v} ;; [0-9]*) dv=$$v ;; \
	*) dv=0~git$$(git log -1 --format=%cd --date=format:%Y%m%d).$$v ;; esac; \
	dv=$$(echo "$$dv" | tr -- - .); \
	tar -xzf $$tarball -C $(DEB_DIR); rm -f $$tarball; \
	src=$(DEB_DIR)/maglev-lb-$$v; \
	cp -r packaging/debian $$src/debian; \
	{ echo "maglev-lb ($$dv) unstable; urgency=medium"; echo; \
	  echo "  * Built by make deb from $$v."; echo; \
	  echo " -- $(DEB_MAINT)  $$(git log -1 --format=%aD)"; } > $$src/debian/changelog; \
	cd $$src && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
		{ tail -n 30 ../build.log; echo "make deb: failed, log in $(DEB_DIR)/build.log"; exit 1; }
	@ls $(DEB_DIR)/*.deb
