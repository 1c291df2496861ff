#!/usr/bin/env bash
# Builds the .deb from the current tree and installs it into a throw-away root with dpkg
# (no chroot: the maintainer scripts run with DPKG_ROOT set and must touch only that
# root), then checks the package's file list, conffiles, maintainer scripts and units,
# and that purging removes it again. CONFIG=debug (the default here) packages the test
# build's binaries, so CI needs no second, release build; CONFIG=release checks a real one.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$(dirname "$0")/.."
CONFIG=${CONFIG:-debug}
make_temp_dir mamtd-deb-root
root=$TEMP_DIR

# Uncompressed: xz or gzip of the binaries costs a minute or more on two cores for a package
# that is installed once and deleted. The build's output
# (dpkg-shlibdeps warns about every toolchain library of a debug build) only on failure.
make -s deb CONFIG="$CONFIG" DEB_COMPRESS=-Znone >"$root/make.out" 2>&1 || { cat "$root/make.out" >&2; exit 1; }
version=$(".build/$CONFIG/mamtelemetryd" --version | awk '{ print $2 }')
deb=$(ls .build-deb/mamtelemetryd_"$version"_*.deb)
mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info"
touch "$root/var/lib/dpkg/status"
# --force-depends: the throw-away root has no libc6 & co. installed for dpkg to see.
in_root() { dpkg --root="$root" --log="$root/dpkg.log" --force-not-root --force-script-chrootless --force-depends "$@"; }

failures=0
fail() { echo "deb-test: $*" >&2; failures=$((failures + 1)); }

expected_files=(
  usr/bin/mamtelemetryd usr/bin/mamtelemetryctl
  usr/libexec/mamtelemetryd/mamtelemetryd usr/libexec/mamtelemetryd/mamtelemetryctl
  usr/lib/systemd/system/mamtelemetryd.service usr/lib/systemd/system/mamtelemetryd.socket
  usr/lib/systemd/catalog/mamtelemetryd.catalog
  etc/mamtelemetryd/config.yaml
  usr/share/man/man1/mamtelemetryd.1.gz usr/share/man/man1/mamtelemetryctl.1.gz
  usr/share/bash-completion/completions/mamtelemetryd usr/share/bash-completion/completions/mamtelemetryctl
  usr/share/zsh/vendor-completions/_mamtelemetryd usr/share/zsh/vendor-completions/_mamtelemetryctl
  usr/share/fish/vendor_completions.d/mamtelemetryd.fish usr/share/fish/vendor_completions.d/mamtelemetryctl.fish
  usr/share/doc/mamtelemetryd/README.md
)
listing=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./||')
for f in "${expected_files[@]}"; do
  grep -qx "$f" <<<"$listing" || fail "$deb does not contain $f"
done
[[ $(dpkg-deb -f "$deb" Version) == "$version" ]] || fail "package version is not the daemon's $version"
# The load generator is a developer tool (benchmarks, soaks): built with the package, never shipped.
! grep -q mamtelemetry-bench <<<"$listing" || fail "$deb ships mamtelemetry-bench, a developer tool"

in_root -i "$deb" >"$root/install.out" 2>&1 || { cat "$root/install.out" >&2; fail "dpkg -i failed"; }
in_root -s mamtelemetryd | grep -qx 'Status: install ok installed' || fail "not installed ok"
for f in "${expected_files[@]}"; do
  [[ -e "$root/$f" ]] || fail "installed root lacks $f"
  in_root -L mamtelemetryd | grep -qx "/$f" || fail "dpkg -L does not list /$f"
done
[[ $("$root/usr/bin/mamtelemetryd" --version) == "mamtelemetryd $version" ]] || fail "installed daemon does not run"
"$root/usr/bin/mamtelemetryctl" events --help | grep -q -- '--output' || fail "installed mamtelemetryctl has no --output"

# Maintainer scripts and conffiles as dpkg recorded them.
for s in postinst prerm postrm; do
  cmp -s "packaging/debian/$s" "$root/var/lib/dpkg/info/mamtelemetryd.$s" || fail "$s not installed as shipped"
  sh -n "$root/var/lib/dpkg/info/mamtelemetryd.$s" || fail "$s does not parse"
done
[[ $(cat "$root/var/lib/dpkg/info/mamtelemetryd.conffiles") == /etc/mamtelemetryd/config.yaml ]] || fail "conffiles"
# postinst refreshed the catalog inside the root (journalctl --root), not the host's.
if command -v journalctl >/dev/null; then
  [[ -s "$root/var/lib/systemd/catalog/database" ]] || fail "postinst did not build the catalog in DPKG_ROOT"
fi

# Units: installed as shipped (SystemdUnitTests verifies those with systemd-analyze),
# naming files the package installed.
for u in mamtelemetryd.service mamtelemetryd.socket; do
  cmp -s "systemd/$u" "$root/usr/lib/systemd/system/$u" || fail "$u differs from systemd/$u"
done
exec_start=$(sed -n 's/^ExecStart=//p' "$root/usr/lib/systemd/system/mamtelemetryd.service")
[[ $exec_start == "/usr/bin/mamtelemetryd --config /etc/mamtelemetryd/config.yaml" ]] || fail "ExecStart is '$exec_start'"
for path in $exec_start; do
  [[ $path != /* || -e "$root$path" ]] || fail "ExecStart names $path, which the package does not install"
done

# Man pages render without warnings; completions are loadable by bash.
for m in mamtelemetryd mamtelemetryctl; do
  warnings=$(zcat "$root/usr/share/man/man1/$m.1.gz" | groff -man -Tutf8 -ww -z 2>&1)
  [[ -z $warnings ]] || fail "man page $m: $warnings"
  bash -n "$root/usr/share/bash-completion/completions/$m" || fail "bash completion $m does not parse"
done

# Purge removes every file, the conffile and the state postrm owns (under the root only).
mkdir -p "$root/var/lib/mamtelemetryd" && touch "$root/var/lib/mamtelemetryd/records.sqlite"
in_root -P mamtelemetryd >"$root/purge.out" 2>&1 || { cat "$root/purge.out" >&2; fail "dpkg -P failed"; }
for f in "${expected_files[@]}" var/lib/mamtelemetryd; do
  [[ ! -e "$root/$f" ]] || fail "purge left $f"
done

if ((failures)); then
  echo "deb-test: $failures failure(s) in $deb" >&2
  exit 1
fi
echo "deb-test: $deb installs, lists ${#expected_files[@]} expected files, purges cleanly"
