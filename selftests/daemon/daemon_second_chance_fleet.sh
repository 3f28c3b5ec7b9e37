#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# daemon_second_chance.sh in fleet mode: one balancer, a 3-member etcd; every
# change goes through etcd and comes back as a revision, which must keep the
# previous owners as a local change does.
TEST_FLEET=1 exec "$(dirname "$0")/daemon_second_chance.sh"
