#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The shipped Prometheus rules (packaging/prometheus/maglev-rules.yml) with
# Debian's promtool: they parse (promtool check rules), every alert fires on
# the series of its fault and stays quiet on healthy ones (promtool test rules
# with maglev-rules.test.yml), and every alert has a test and names only
# series maglevd exports. The Grafana dashboard is JSON with a title and
# panels. A real Prometheus scraping real balancers: selftests/e2e/prometheus.sh.
. "$(dirname "$0")/lib.sh"
RULES=$ROOT/packaging/prometheus/maglev-rules.yml
UNIT=$ROOT/selftests/packaging/maglev-rules.test.yml
DASH=$ROOT/packaging/grafana/maglev-dashboard.json
command -v promtool >/dev/null || { nok "promtool missing: scripts/install-deps installs Debian's prometheus"; t_done; }

quiet() { "$@" >"$TDIR/out" 2>&1 || { sed "s/^/# /" "$TDIR/out"; return 1; }; }
TDIR=$(mktemp -d)
trap 'rm -rf "$TDIR"' EXIT
check "promtool check rules" quiet promtool check rules "$RULES"
check "promtool test rules: every case passes" quiet bash -c "cd $ROOT/selftests/packaging && promtool test rules $UNIT"
# Every alert of the rules file is asserted somewhere in the unit tests.
alerts=$(sed -n 's/^ *- alert: //p' "$RULES" | sort -u)
untested=
for a in $alerts; do grep -q "alertname: $a\$" "$UNIT" || untested+=" $a"; done
check "every one of the $(echo "$alerts" | wc -w) alerts has a unit test" [ -z "$untested" ]
[ -n "$untested" ] && diag "untested:$untested"
# Every maglev_ series a rule names is one maglevd prints (its name as a
# literal in userspace/maglevd: a renamed metric breaks the rule otherwise).
unknown=
for n in $(grep -oE '\bmaglev_[a-z_]+' "$RULES" | sort -u); do
	grep -rqE "\"(# HELP |# TYPE )?$n[ {\"]" "$ROOT/userspace/maglevd" || unknown+=" $n"
done
check "every maglev_ series the rules name is exported by maglevd" [ -z "$unknown" ]
[ -n "$unknown" ] && diag "not exported:$unknown"
dash_ok() { jq -e '.title == "maglev-lb" and (.panels | length) > 5 and ([.. | objects | select(has("expr"))] | length) > 5' "$DASH" >/dev/null; }
check "the dashboard is JSON with a title, panels and queries" dash_ok
t_done
