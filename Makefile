# Makefile — build, install and package mamtelemetryd.
#
#   make                      release build (static Swift runtime, see SWIFT_BUILD_FLAGS)
#   sudo make install         binaries, systemd units, journal catalog, default config, docs
#   make install DESTDIR=/tmp/stage prefix=/usr   staged install for packagers
#   make install-data DESTDIR=...                 everything except the binaries (no build needed)
#   make uninstall            removes what install put down (keeps config and state)
#   make deb                  release build + .build-deb/mamtelemetryd_<version>_<arch>.deb
#   make deb CONFIG=debug     the same from the debug build CI already has (a test package:
#                             it links the toolchain's Swift runtime, so only for this machine)
#   make test / make bench    the project's test and benchmark scripts
#   make soak                 two hours of steady load; memory, cap, latency into BENCHMARKS.md
#   make microbench           component benchmarks (ordo-one/benchmark) in the Benchmarks/ package
#   make callgrind            instructions per hot-path operation against Benchmarks/callgrind-baseline.tsv
#
# Layout (FHS): the real executables and their SwiftPM resource bundles live together in
# $(libexecdir)/mamtelemetryd, because Foundation finds a target's resources next to the
# executable's resolved path; $(bindir) holds relative symlinks to them, so
# /usr/bin/mamtelemetryd is what the unit and operators run.

PACKAGE      := mamtelemetryd
# What install and the package ship; mamtelemetry-bench (the load generator) stays a developer
# tool that `make bench` and `make soak` build for themselves.
PROGRAMS     := mamtelemetryd mamtelemetryctl

# The package version is the one the built daemon reports (`mamtelemetryd --version`,
# DaemonVersion in the sources), so dpkg and the daemon always agree. `VERSION=` overrides.
VERSION ?=
DEB_VERSION = $(or $(VERSION),$(shell "$(SWIFT_BIN_DIR)/mamtelemetryd" --version 2>/dev/null | awk 'NR == 1 { print $$2 }'))

# --- installation directories (GNU coding standards names) -------------------------
PREFIX        ?= /usr
prefix        ?= $(PREFIX)
exec_prefix   ?= $(prefix)
bindir        ?= $(exec_prefix)/bin
libexecdir    ?= $(exec_prefix)/libexec
pkglibexecdir := $(libexecdir)/$(PACKAGE)
sysconfdir    ?= /etc
datarootdir   ?= $(prefix)/share
docdir        ?= $(datarootdir)/doc/$(PACKAGE)
pkgdatadir    := $(datarootdir)/$(PACKAGE)
# systemd looks in /usr/lib/systemd (and /usr/local/lib/systemd for prefix=/usr/local).
systemdunitdir ?= $(prefix)/lib/systemd/system
catalogdir     ?= $(prefix)/lib/systemd/catalog
mandir         ?= $(datarootdir)/man
# Where bash-completion, zsh and fish look for completions shipped by packages.
bashcompdir    ?= $(datarootdir)/bash-completion/completions
zshcompdir     ?= $(datarootdir)/zsh/vendor-completions
fishcompdir    ?= $(datarootdir)/fish/vendor_completions.d
DESTDIR       ?=

INSTALL      ?= install
SED          ?= sed

# --- Swift build ------------------------------------------------------------------
SWIFT        ?= swift
# The Swift runtime and Foundation are linked statically so the installed daemon needs
# only the distribution's C libraries, not a toolchain at the build machine's path;
# `make build SWIFT_BUILD_FLAGS=` gives a dynamically linked developer build.
# CONFIG=debug reuses the test build's products (no second, long release build in CI).
CONFIG            ?= release
SWIFT_BUILD_FLAGS ?= $(if $(filter release,$(CONFIG)),--static-swift-stdlib)
SWIFT_BIN_DIR     ?= .build/$(CONFIG)

# --- Debian package ---------------------------------------------------------------
DEB_DIR        ?= .build-deb
DEB_STAGE      := $(DEB_DIR)/root
DEB_ARCH       ?= $(shell dpkg --print-architecture 2>/dev/null)
DEB_MAINTAINER ?= mamtelemetryd maintainers <mamtelemetryd@localhost>
DEB_FILE        = $(DEB_DIR)/$(PACKAGE)_$(DEB_VERSION)_$(DEB_ARCH).deb
# xz is what every dpkg reads; `make deb DEB_COMPRESS=-Zgzip` is much faster for local tries.
DEB_COMPRESS   ?= -Zxz

# Source files that install-data ships.
UNIT_FILES   := systemd/mamtelemetryd.service systemd/mamtelemetryd.socket
CATALOG_FILE := systemd/mamtelemetryd.catalog
CONFIG_FILE  := packaging/config.yaml
MAN_PAGES    := packaging/man/mamtelemetryd.1 packaging/man/mamtelemetryctl.1

# Installed units name the installed paths, whatever prefix/sysconfdir were chosen.
UNIT_SED := -e 's|/usr/bin/mamtelemetryd|$(bindir)/mamtelemetryd|g' \
            -e 's|/etc/mamtelemetryd/|$(sysconfdir)/mamtelemetryd/|g' \
            -e 's|/usr/share/doc/mamtelemetryd/|$(docdir)/|g'

.PHONY: all build install install-bin install-data uninstall deb package-deb test bench bench-sustained soak microbench callgrind clean

all: build

build:
	$(SWIFT) build -c $(CONFIG) $(SWIFT_BUILD_FLAGS)

install: install-bin install-data

install-bin:
	@for p in $(PROGRAMS); do \
	    test -x "$(SWIFT_BIN_DIR)/$$p" || { \
	        echo "error: $(SWIFT_BIN_DIR)/$$p not found: run 'make build' first" >&2; exit 1; }; \
	done
	$(INSTALL) -d -m 0755 "$(DESTDIR)$(pkglibexecdir)" "$(DESTDIR)$(bindir)"
	@set -e; for p in $(PROGRAMS); do \
	    echo "install $(SWIFT_BIN_DIR)/$$p -> $(DESTDIR)$(pkglibexecdir)/$$p"; \
	    $(INSTALL) -m 0755 "$(SWIFT_BIN_DIR)/$$p" "$(DESTDIR)$(pkglibexecdir)/$$p"; \
	    ln -sfr "$(DESTDIR)$(pkglibexecdir)/$$p" "$(DESTDIR)$(bindir)/$$p"; \
	done
	@set -e; for b in "$(SWIFT_BIN_DIR)"/*.resources; do \
	    test -d "$$b" || continue; \
	    name=$$(basename "$$b"); \
	    echo "install $$b -> $(DESTDIR)$(pkglibexecdir)/$$name"; \
	    rm -rf "$(DESTDIR)$(pkglibexecdir)/$$name"; \
	    cp -R "$$b" "$(DESTDIR)$(pkglibexecdir)/$$name"; \
	    chmod -R u=rwX,go=rX "$(DESTDIR)$(pkglibexecdir)/$$name"; \
	done
	@# Completions come from the binaries themselves, so they always match the flags.
	$(INSTALL) -d -m 0755 "$(DESTDIR)$(bashcompdir)" "$(DESTDIR)$(zshcompdir)" "$(DESTDIR)$(fishcompdir)"
	@set -e; for p in $(PROGRAMS); do \
	    echo "install completions for $$p -> $(DESTDIR)$(bashcompdir), $(DESTDIR)$(zshcompdir), $(DESTDIR)$(fishcompdir)"; \
	    "$(SWIFT_BIN_DIR)/$$p" --generate-completion-script bash > "$(DESTDIR)$(bashcompdir)/$$p"; \
	    "$(SWIFT_BIN_DIR)/$$p" --generate-completion-script zsh > "$(DESTDIR)$(zshcompdir)/_$$p"; \
	    "$(SWIFT_BIN_DIR)/$$p" --generate-completion-script fish > "$(DESTDIR)$(fishcompdir)/$$p.fish"; \
	    chmod 0644 "$(DESTDIR)$(bashcompdir)/$$p" "$(DESTDIR)$(zshcompdir)/_$$p" "$(DESTDIR)$(fishcompdir)/$$p.fish"; \
	done

install-data:
	$(INSTALL) -d -m 0755 "$(DESTDIR)$(systemdunitdir)" "$(DESTDIR)$(docdir)" "$(DESTDIR)$(mandir)/man1"
	$(INSTALL) -m 0644 $(MAN_PAGES) "$(DESTDIR)$(mandir)/man1/"
	@set -e; for u in $(UNIT_FILES); do \
	    dest="$(DESTDIR)$(systemdunitdir)/$$(basename $$u)"; \
	    echo "install $$u -> $$dest"; \
	    $(SED) $(UNIT_SED) "$$u" > "$$dest.tmp"; \
	    chmod 0644 "$$dest.tmp"; mv -f "$$dest.tmp" "$$dest"; \
	done
	@if [ -f "$(CATALOG_FILE)" ]; then \
	    echo "install $(CATALOG_FILE) -> $(DESTDIR)$(catalogdir)/"; \
	    $(INSTALL) -D -m 0644 "$(CATALOG_FILE)" "$(DESTDIR)$(catalogdir)/$(PACKAGE).catalog"; \
	else \
	    echo "warning: $(CATALOG_FILE) missing: journal catalog not installed" >&2; \
	fi
	@conf="$(DESTDIR)$(sysconfdir)/$(PACKAGE)/config.yaml"; \
	if [ ! -f "$(CONFIG_FILE)" ]; then \
	    echo "warning: $(CONFIG_FILE) missing: no default config installed" >&2; \
	elif [ -z "$(DESTDIR)" ] && [ -e "$$conf" ]; then \
	    echo "keeping existing $$conf (the shipped default is in $(docdir)/config.yaml.example)"; \
	else \
	    echo "install $(CONFIG_FILE) -> $$conf"; \
	    $(INSTALL) -D -m 0644 "$(CONFIG_FILE)" "$$conf"; \
	fi
	@if [ -f "$(CONFIG_FILE)" ]; then \
	    $(INSTALL) -m 0644 "$(CONFIG_FILE)" "$(DESTDIR)$(docdir)/config.yaml.example"; fi
	$(INSTALL) -m 0644 systemd/README.md "$(DESTDIR)$(docdir)/README.systemd.md"
	@if [ -f README.md ]; then $(INSTALL) -m 0644 README.md "$(DESTDIR)$(docdir)/README.md"; fi
	@if [ -f LICENSE ]; then $(INSTALL) -m 0644 LICENSE "$(DESTDIR)$(docdir)/copyright"; fi
	@set -e; for d in dashboards/*.json; do \
	    test -f "$$d" || continue; \
	    $(INSTALL) -D -m 0644 "$$d" "$(DESTDIR)$(pkgdatadir)/$$d"; \
	done
	@# Only a live install touches the running system; a staged (DESTDIR) tree is left
	@# for the package's maintainer scripts.
	@if [ -z "$(DESTDIR)" ]; then \
	    if [ -f "$(catalogdir)/$(PACKAGE).catalog" ] && command -v journalctl >/dev/null 2>&1; then \
	        echo "journalctl --update-catalog"; journalctl --update-catalog; fi; \
	    if [ -d /run/systemd/system ]; then echo "systemctl daemon-reload"; systemctl daemon-reload; fi; \
	fi

uninstall:
	rm -f $(foreach p,$(PROGRAMS),"$(DESTDIR)$(bindir)/$(p)" "$(DESTDIR)$(pkglibexecdir)/$(p)")
	rm -rf "$(DESTDIR)$(pkglibexecdir)"/*.resources
	-rmdir "$(DESTDIR)$(pkglibexecdir)" 2>/dev/null
	rm -f $(foreach u,$(UNIT_FILES),"$(DESTDIR)$(systemdunitdir)/$(notdir $(u))")
	rm -f "$(DESTDIR)$(catalogdir)/$(PACKAGE).catalog"
	rm -f $(foreach m,$(MAN_PAGES),"$(DESTDIR)$(mandir)/man1/$(notdir $(m))")
	rm -f $(foreach p,$(PROGRAMS),"$(DESTDIR)$(bashcompdir)/$(p)" "$(DESTDIR)$(zshcompdir)/_$(p)" "$(DESTDIR)$(fishcompdir)/$(p).fish")
	rm -rf "$(DESTDIR)$(docdir)" "$(DESTDIR)$(pkgdatadir)"
	@echo "kept $(DESTDIR)$(sysconfdir)/$(PACKAGE)/ and the state in /var/lib/$(PACKAGE): remove them by hand if wanted"
	@if [ -z "$(DESTDIR)" ]; then \
	    if command -v journalctl >/dev/null 2>&1; then journalctl --update-catalog; fi; \
	    if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi; \
	fi

deb: build
	$(MAKE) package-deb

# Packages the already built binaries in $(SWIFT_BIN_DIR); `deb` builds them first.
package-deb:
	@test -n "$(DEB_ARCH)" || { echo "error: dpkg --print-architecture failed: set DEB_ARCH" >&2; exit 1; }
	@echo "$(DEB_VERSION)" | grep -Eq '^[0-9][A-Za-z0-9.+~-]*$$' || { \
	    echo "error: no valid version from $(SWIFT_BIN_DIR)/mamtelemetryd --version: set VERSION" >&2; exit 1; }
	@for f in $(CATALOG_FILE) $(CONFIG_FILE); do \
	    test -f "$$f" || { echo "error: $$f is missing; a release package must ship it" >&2; exit 1; }; \
	done
	rm -rf "$(DEB_STAGE)"
	$(MAKE) install DESTDIR="$(abspath $(DEB_STAGE))" prefix=/usr sysconfdir=/etc
	@# Debug info is not shipped; the symbol table stays so crash backtraces name functions.
	strip --strip-debug $(foreach p,$(PROGRAMS),"$(DEB_STAGE)/usr/libexec/$(PACKAGE)/$(p)")
	@# Debian ships man pages compressed.
	gzip -9n $(foreach m,$(MAN_PAGES),"$(DEB_STAGE)/usr/share/man/man1/$(notdir $(m))")
	@# Every shared library the binaries load must come from a Debian package: a
	@# dynamically linked Swift runtime (/opt/swift/...) would install fine and then
	@# fail to start on any machine without the toolchain. A CONFIG=debug test package
	@# links it on purpose and is not checked.
	@test "$(CONFIG)" != release || for p in $(PROGRAMS); do \
	    ldd "$(DEB_STAGE)/usr/libexec/$(PACKAGE)/$$p" | awk '/=>/ { print $$3 }' | while read -r lib; do \
	        real=$$(readlink -f "$$lib"); \
	        for candidate in "$$lib" "$$real" "$${real#/usr}" "/usr$$lib"; do \
	            dpkg -S "$$candidate" >/dev/null 2>&1 && continue 2; \
	        done; \
	        echo "error: $$p loads $$lib, which no installed Debian package provides" \
	             "(build with SWIFT_BUILD_FLAGS=--static-swift-stdlib)" >&2; exit 1; \
	    done || exit 1; \
	done
	$(INSTALL) -d -m 0755 "$(DEB_STAGE)/DEBIAN" "$(DEB_DIR)/shlibdeps/debian"
	$(INSTALL) -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm \
	    "$(DEB_STAGE)/DEBIAN/"
	echo "/etc/$(PACKAGE)/config.yaml" > "$(DEB_STAGE)/DEBIAN/conffiles"
	@# dpkg-shlibdeps reads the libraries the binaries really link and maps them to
	@# this distribution's package names and minimum versions.
	printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' $(PACKAGE) $(PACKAGE) \
	    > "$(DEB_DIR)/shlibdeps/debian/control"
	cd "$(DEB_DIR)/shlibdeps" && dpkg-shlibdeps -O $(if $(filter release,$(CONFIG)),,--ignore-missing-info) \
	    $(foreach p,$(PROGRAMS),-e"$(abspath $(DEB_STAGE))/usr/libexec/$(PACKAGE)/$(p)") \
	    | sed -n 's/^shlibs:Depends=//p' > depends
	@test -s "$(DEB_DIR)/shlibdeps/depends" || { echo "error: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
	@echo "Depends: $$(cat $(DEB_DIR)/shlibdeps/depends)"
	$(SED) -e 's|@VERSION@|$(DEB_VERSION)|' -e 's|@ARCH@|$(DEB_ARCH)|' \
	    -e "s#@DEPENDS@#$$(cat $(DEB_DIR)/shlibdeps/depends)#" \
	    -e 's|@MAINTAINER@|$(DEB_MAINTAINER)|' \
	    -e "s|@INSTALLED_SIZE@|$$(du -sk --exclude=DEBIAN $(DEB_STAGE) | cut -f1)|" \
	    packaging/debian/control.in > "$(DEB_STAGE)/DEBIAN/control"
	cd "$(DEB_STAGE)" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' \
	    | LC_ALL=C sort -z | xargs -0 md5sum > DEBIAN/md5sums
	dpkg-deb --root-owner-group $(DEB_COMPRESS) --build "$(DEB_STAGE)" "$(DEB_FILE)"
	@echo "built $(DEB_FILE)"

test:
	./scripts/test.sh

bench:
	./scripts/deps.sh bench
	./scripts/bench.sh

# Issue 26's sustained shipping (not CI, ~25 minutes): ten minutes at SUSTAINED_RATE into one
# collector, then SUSTAINED_RATE_TWO over two collectors on a two-shard cluster (all on this
# machine's cores: two shards cost more CPU per record than one server, BENCHMARKS.md).
SUSTAINED_RATE ?= 10000
SUSTAINED_RATE_TWO ?= 8000
SUSTAINED_OUT ?= /tmp/mamtelemetry-sustained
bench-sustained:
	./scripts/deps.sh bench
	$(SWIFT) build -c release --scratch-path .build-release --product mamtelemetryd
	$(SWIFT) build -c release --scratch-path .build-release --product mamtelemetry-bench
	mkdir -p $(SUSTAINED_OUT)
	BENCH_BIN=.build-release/release SUSTAINED_RATE=$(SUSTAINED_RATE) SUSTAINED_COLLECTORS=1 \
	  ./scripts/bench-clickhouse-sustained.sh $(SUSTAINED_OUT)/one-collector.json
	BENCH_BIN=.build-release/release SUSTAINED_RATE=$(SUSTAINED_RATE_TWO) SUSTAINED_COLLECTORS=2 \
	  ./scripts/bench-clickhouse-sustained.sh $(SUSTAINED_OUT)/two-collectors.json

# Two hours of steady load at half the maximum ingest rate (not CI; scripts/test.sh runs a
# five-minute version): writes its table and plot into BENCHMARKS.md.
soak:
	./scripts/soak.sh --update-benchmarks

# The component benchmarks are a package of their own (Benchmarks/Package.swift), so the
# product build never compiles the benchmark framework; both build it in release.
microbench:
	cd Benchmarks && $(SWIFT) package benchmark

callgrind:
	./scripts/callgrind.sh

# Removes only what this Makefile creates; `swift package clean` clears the Swift build.
clean:
	rm -rf "$(DEB_DIR)"
