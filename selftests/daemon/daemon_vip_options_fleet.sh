#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# daemon_vip_options.sh in fleet mode: one balancer, a 3-member etcd; every
# option must round-trip through etcd (written by maglevctl, applied back from
# the revision).
TEST_FLEET=1 exec "$(dirname "$0")/daemon_vip_options.sh"
