# Packaging tests: the man pages lint clean and match the programs; make
# install (and uninstall, dist) put and name every file where it belongs;
# the bash completion completes, the VIPs and backends from a real daemon;
# make deb builds both packages (about 100 s with the DKMS module build); the
# benchmark's stripped balancer still applies and compiles; the Prometheus rules pass promtool's
# checks and unit tests.
TESTS += selftests/packaging/man_pages.sh selftests/packaging/install.sh \
	selftests/packaging/completion.sh selftests/packaging/deb.sh \
	selftests/packaging/bench_patch.sh selftests/packaging/licence.sh selftests/packaging/changelog.sh \
	selftests/packaging/prometheus_rules.sh
# Nothing here runs the userspace under test in a way sanitizers would add to.
SAN_SKIP += selftests/packaging/%
