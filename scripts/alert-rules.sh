#!/usr/bin/env bash
# Checks the Prometheus rules under dashboards/: every rule file passes `promtool check rules`,
# every alert and recording rule is exercised by a unit test in dashboards/alerts-tests.yml
# (an alert by an alert_rule_test naming it, a recording rule by a promql_expr_test or an alert
# that reads it), and `promtool test rules` passes. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/../dashboards"
promtool check rules alerts.yml
tests=alerts-tests.yml
missing=0
while read -r alert; do
    if ! grep -q "alertname: $alert\$" "$tests"; then
        echo "alert $alert has no alert_rule_test in $tests" >&2
        missing=1
    fi
done < <(sed -n 's/^ *- alert: *//p' alerts.yml)
while read -r record; do
    if ! grep -q -- "expr: $record" "$tests" && ! grep -q "expr: .*$record" alerts.yml; then
        echo "recording rule $record is neither tested in $tests nor read by an alert" >&2
        missing=1
    fi
done < <(sed -n 's/^ *- record: *//p' alerts.yml)
((missing == 0)) || exit 1
promtool test rules "$tests"
