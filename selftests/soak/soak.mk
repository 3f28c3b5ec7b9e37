# The soak (issue 33): a whole fleet with real clients while a seeded
# scheduler breaks its parts; selftests/soak/soak.sh says what it runs and
# checks. `make soak` runs it for SOAK_SECONDS (default 600) with SOAK_SEED.
# soak_90.sh, the 90-second run with a fixed seed, is part of make check.
TESTS += selftests/soak/soak_90.sh
SOAK_SECONDS ?= 600
SOAK_SEED ?= 1

.PHONY: soak
soak: deps
	@$(MAKE) --no-print-directory all
	@SOAK_SECONDS=$(SOAK_SECONDS) SOAK_SEED=$(SOAK_SEED) selftests/soak/soak.sh
