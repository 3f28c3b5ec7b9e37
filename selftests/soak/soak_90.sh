#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The soak (selftests/soak/soak.sh) for 90 seconds with a fixed seed: the
# same fault schedule every run.
export SOAK_SECONDS=90 SOAK_SEED=${SOAK_SEED:-3}
exec "$(dirname "$0")/soak.sh"
