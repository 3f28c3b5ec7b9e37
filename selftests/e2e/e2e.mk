# End-to-end tests in network namespaces with real clients and servers
# (issue 5): scripts/topology builds the namespaces, userspace/tools/ the
# servers and clients, maglevd/maglevctl run the balancers. Each test is a
# TAP-printing shell script; the whole set takes about 200 seconds (bgp.sh,
# BIRD on a router and three balancers, about 45; demo.sh, make demo whole, 30;
# keepalived.sh, a VRRP pair failed over twice, 35; prometheus.sh, a
# real Prometheus and two balancers, 50).
E2E_TESTS := $(addprefix selftests/e2e/,topology.sh spread.sh disruption.sh persistence.sh \
	health.sh ecmp.sh protocols.sh icmp.sh operator.sh load.sh bgp.sh second_chance.sh demo.sh \
	spoof.sh keepalived.sh prometheus.sh)
TESTS += $(E2E_TESTS)
