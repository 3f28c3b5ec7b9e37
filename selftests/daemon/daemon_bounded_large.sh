#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# daemon_bounded_traffic.sh on the default 1,048,576-entry connection table
# with every way holding an entry (closed connections): what the loads come
# from is a census of the whole table, which then costs tens of ms, yet the
# cap must hold as on a small table (issue 19).
BOUNDED_CONN_TABLE=1048576 BOUNDED_FILL_WAYS=4 exec "$(dirname "$0")/daemon_bounded_traffic.sh"
