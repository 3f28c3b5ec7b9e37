# maglevd + maglevctl tests against a real daemon with XDP attached to a veth
# pair in namespaces the tests create (see selftests/daemon/lib.sh).
TESTS += selftests/daemon/daemon_cli.sh selftests/daemon/daemon_traffic.sh \
	selftests/daemon/daemon_hot_flows.sh \
	selftests/daemon/daemon_health.sh selftests/daemon/daemon_health_encap.sh \
	selftests/daemon/daemon_health_batch.sh selftests/daemon/daemon_health_unknown.sh \
	selftests/daemon/daemon_health_start_down.sh selftests/daemon/daemon_health_on_fail.sh \
	selftests/daemon/daemon_health_udp.sh selftests/daemon/daemon_health_https.sh \
	selftests/daemon/daemon_multi_iface.sh \
	selftests/daemon/daemon_state.sh selftests/daemon/daemon_nexthop.sh \
	selftests/daemon/daemon_reload.sh selftests/daemon/daemon_crash.sh \
	selftests/daemon/daemon_bpffs.sh selftests/daemon/daemon_state_missing.sh \
	selftests/daemon/daemon_reload_result.sh selftests/daemon/daemon_reload_refuse.sh \
	selftests/daemon/daemon_restore_safe.sh selftests/daemon/daemon_placement.sh \
	selftests/daemon/daemon_announce.sh selftests/daemon/daemon_announce_frr.sh \
	selftests/daemon/daemon_mtu_ipv6.sh selftests/daemon/daemon_operator.sh \
	selftests/daemon/daemon_vip_set.sh selftests/daemon/daemon_second_chance.sh \
	selftests/daemon/daemon_second_chance_fleet.sh selftests/daemon/daemon_second_chance_restart.sh \
	selftests/daemon/daemon_vip_options.sh \
	selftests/daemon/daemon_vip_options_fleet.sh \
	selftests/daemon/daemon_loop_latency.sh selftests/daemon/daemon_drift.sh \
	selftests/daemon/daemon_metrics_loop.sh selftests/daemon/daemon_metrics_conventions.sh \
	selftests/daemon/daemon_metrics_http.sh \
	selftests/daemon/daemon_upgrade.sh \
	selftests/daemon/daemon_fleet.sh selftests/daemon/daemon_fleet_tls.sh \
	selftests/daemon/daemon_fleet_health.sh selftests/daemon/decap_strict.sh \
	selftests/daemon/daemon_bounded.sh selftests/daemon/daemon_bounded_traffic.sh \
	selftests/daemon/daemon_commit_fail.sh \
	selftests/daemon/daemon_fleet_rollback.sh selftests/daemon/daemon_commit_overlap.sh \
	selftests/daemon/daemon_health_on_fail_restart.sh selftests/daemon/daemon_datapath_drift.sh \
	selftests/daemon/daemon_fleet_expect.sh selftests/daemon/daemon_fleet_faults.sh \
	selftests/daemon/daemon_announce_restart.sh selftests/daemon/daemon_fleet_partition.sh \
	selftests/daemon/daemon_fleet_health_failsafe.sh selftests/daemon/daemon_announce_failure.sh \
	selftests/daemon/daemon_fleet_history.sh \
	selftests/daemon/daemon_del_flows.sh selftests/daemon/daemon_health_new_down.sh \
	selftests/daemon/daemon_settle.sh selftests/daemon/daemon_marks_restart.sh selftests/daemon/daemon_second_chance_held.sh selftests/daemon/daemon_slow_start.sh selftests/daemon/daemon_damping.sh \
	selftests/daemon/daemon_fleet_settle.sh selftests/daemon/daemon_admission_restart.sh \
	selftests/daemon/daemon_fleet_damping_restart.sh
# The mirror into the slow-path module: needs the module, so the 6.1 VM only.
VM_TESTS += selftests/daemon/daemon_slowpath.sh

DAEMON_TEST_DIR := $(BUILD)/selftests/daemon

# daemon_upgrade.sh's "old release": maglevd with maps of another layout
# (LAYOUT_VARIANT in the top Makefile), built in its own build dir by a
# sub-make, which is incremental.
ifneq ($(LAYOUT_VARIANT),1)
ALL_TARGETS += layout-variant
.PHONY: layout-variant
layout-variant: $(BUILD)/maglevd
	$(MAKE) --no-print-directory BUILD=$(BUILD)/layout-variant LAYOUT_VARIANT=1 \
		KSRC=$(KSRC) $(BUILD)/layout-variant/maglevd
endif
ALL_TARGETS += $(DAEMON_TEST_DIR)/slowpath_query

$(DAEMON_TEST_DIR)/slowpath_query: selftests/daemon/slowpath_query.c userspace/lib/slowpath_nl.c \
		userspace/lib/ctl_proto.c userspace/lib/slowpath_nl.h userspace/lib/ctl_proto.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< userspace/lib/slowpath_nl.c userspace/lib/ctl_proto.c -lmnl -ljson-c
ALL_TARGETS += $(DAEMON_TEST_DIR)/conn_fill

$(DAEMON_TEST_DIR)/conn_fill: selftests/daemon/conn_fill.c include/maglev_conn.h include/maglev_maps.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lbpf
TESTS += selftests/daemon/daemon_bounded_large.sh
# The health-check field table (userspace/lib/hc_fields.c) on its own.
HC_FIELDS_TEST := $(DAEMON_TEST_DIR)/hc_fields_test
ALL_TARGETS += $(HC_FIELDS_TEST)
TESTS += $(HC_FIELDS_TEST)

$(HC_FIELDS_TEST): selftests/daemon/hc_fields_test.c userspace/lib/hc_fields.c userspace/lib/hc_fields.h \
		$(KSELFTEST_H)
	@mkdir -p $(@D)
	$(CC) $(SELFTEST_CFLAGS) -Iuserspace/lib -o $@ $< userspace/lib/hc_fields.c
