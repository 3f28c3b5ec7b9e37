# make install [DESTDIR=...] [PREFIX=/usr/local]: the daemon, the CLI, the
# backend-side decap object and its loader (maglev-decap), the systemd units
# (maglevd, and maglev-decap@IFACE for backends; with the decap's and a
# backend sysctl example and the quick start),
# the man pages, the bash completion, the example configs (maglevd; BIRD and FRR for a fleet), the
# operator's guide, and the Prometheus rules and Grafana dashboard (under DATADIR: files Prometheus and
# Grafana read as they are, not documentation a package may compress). Debian
# packaging uses PREFIX=/usr.
# maglev_xdp and maglev_hc need no files: maglevd embeds them (skeletons).
# Nothing goes to /etc: the example attaches to eth0, so the operator copies
# it to /etc/maglev/maglevd.conf and edits it before starting maglevd.
# make uninstall removes what install wrote.
PREFIX ?= /usr/local
DESTDIR ?=
SBINDIR ?= $(PREFIX)/sbin
BINDIR ?= $(PREFIX)/bin
PKGLIBDIR ?= $(PREFIX)/lib/maglev-lb
UNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/maglev-lb
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
DATADIR ?= $(PREFIX)/share/maglev-lb

# SOURCE DESTINATION MODE, three words per file. Recursive: the
# destinations follow PREFIX given on the command line.
INSTALL_FILES = \
	$(BUILD)/maglevd $(SBINDIR)/maglevd 0755 \
	$(BUILD)/maglevctl $(BINDIR)/maglevctl 0755 \
	$(BUILD)/maglev-decap $(SBINDIR)/maglev-decap 0755 \
	$(BUILD)/bpf/maglev_decap.bpf.o $(PKGLIBDIR)/maglev_decap.bpf.o 0644 \
	$(BUILD)/man/maglevd.8 $(MANDIR)/man8/maglevd.8 0644 \
	$(BUILD)/man/maglevctl.8 $(MANDIR)/man8/maglevctl.8 0644 \
	$(BUILD)/man/maglev-decap.8 $(MANDIR)/man8/maglev-decap.8 0644 \
	$(BUILD)/man/maglevd.conf.5 $(MANDIR)/man5/maglevd.conf.5 0644 \
	userspace/maglevctl/completion.bash $(COMPLETIONDIR)/maglevctl 0644 \
	docs/operations.md $(DOCDIR)/operations.md 0644 \
	docs/quickstart.md $(DOCDIR)/quickstart.md 0644 \
	docs/maglev-decap.env.example $(DOCDIR)/examples/maglev-decap.env.example 0644 \
	docs/sysctl-maglev-backend.conf $(DOCDIR)/examples/sysctl-maglev-backend.conf 0644 \
	docs/maglevd.conf.example $(DOCDIR)/examples/maglevd.conf.example 0644 \
	docs/bird.conf $(DOCDIR)/examples/bird.conf 0644 \
	docs/frr.conf $(DOCDIR)/examples/frr.conf 0644 \
	docs/keepalived.conf $(DOCDIR)/examples/keepalived.conf 0644 \
	docs/etcd-maglev.env.example $(DOCDIR)/examples/etcd-maglev.env.example 0644 \
	packaging/prometheus/maglev-rules.yml $(DATADIR)/prometheus/maglev-rules.yml 0644 \
	packaging/grafana/maglev-dashboard.json $(DATADIR)/grafana/maglev-dashboard.json 0644
# The sources: the words in the tree (the destinations are absolute).
INSTALL_SRCS = $(filter $(BUILD)/% docs/% userspace/% packaging/%,$(INSTALL_FILES))

.PHONY: install uninstall install-prereqs
# What install needs built, and no more (packaging/debian/rules builds this).
install-prereqs: $(INSTALL_SRCS)

install: install-prereqs
	@set -- $(INSTALL_FILES); while [ $$# -gt 0 ]; do \
		echo "install $$1 -> $(DESTDIR)$$2"; \
		install -D -m $$3 $$1 "$(DESTDIR)$$2" || exit 1; shift 3; \
	done
	@# The unit names the binary and the guide where this install put them.
	@mkdir -p "$(DESTDIR)$(UNITDIR)"
	sed -e 's|/usr/local/sbin/|$(SBINDIR)/|g' -e 's|/usr/local/bin/|$(BINDIR)/|g' \
		-e 's|/usr/local/share/doc/maglev-lb|$(DOCDIR)|g' \
		docs/maglevd.service > "$(DESTDIR)$(UNITDIR)/maglevd.service"
	sed -e 's|/usr/local/sbin/|$(SBINDIR)/|g' -e 's|/usr/local/share/doc/maglev-lb|$(DOCDIR)|g' \
		docs/maglev-decap@.service > "$(DESTDIR)$(UNITDIR)/maglev-decap@.service"
	sed -e 's|/usr/local/sbin/|$(SBINDIR)/|g' -e 's|/usr/local/share/doc/maglev-lb|$(DOCDIR)|g' \
		docs/maglevd-withdraw.service > "$(DESTDIR)$(UNITDIR)/maglevd-withdraw.service"

uninstall:
	@set -- $(INSTALL_FILES); while [ $$# -gt 0 ]; do \
		rm -fv "$(DESTDIR)$$2"; shift 3; \
	done
	rm -fv "$(DESTDIR)$(UNITDIR)/maglevd.service" "$(DESTDIR)$(UNITDIR)/maglev-decap@.service" \
		"$(DESTDIR)$(UNITDIR)/maglevd-withdraw.service"
