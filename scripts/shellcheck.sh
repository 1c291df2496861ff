#!/usr/bin/env bash
# Every shell script of the project through shellcheck (Debian's, `scripts/deps.sh test`
# installs it): scripts/, scripts/clickhouse/, the CI entry point and the package's
# maintainer scripts. Sourced files are followed (scripts/.shellcheckrc). Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v shellcheck >/dev/null || { echo "shellcheck is not installed: run scripts/deps.sh test" >&2; exit 2; }
shellcheck --external-sources scripts/*.sh scripts/clickhouse/*.sh .ci/run \
  packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm
echo "shellcheck: $(printf '%s\n' scripts/*.sh scripts/clickhouse/*.sh | wc -l) scripts, .ci/run and 3 maintainer scripts clean"
