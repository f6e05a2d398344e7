# ews: build, test, demo and board binaries. `make help` lists the targets.
GO      ?= go
PKG     := github.com/ews-firmware/ews
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X $(PKG)/internal/buildinfo.Version=$(VERSION) -X $(PKG)/internal/buildinfo.Commit=$(COMMIT)
# nethttpomithttp2: net/http without its bundled HTTP/2 (-0.46 MB on armv7); ews speaks
# HTTP/1.1 only (its TLS offers ALPN http/1.1), so nothing is lost (docs/NOTES.md)
TAGS    ?= nethttpomithttp2
# no inlining off the request and gossip path (scripts/gcflags.sh; docs/NOTES.md "Packaging and
# binary size"): -0.85 MB on armv6, the hot path compiled as before
GCFLAGS := $(shell bash scripts/gcflags.sh full)
BUILD   := CGO_ENABLED=0 $(GO) build -trimpath -tags "$(TAGS)" $(GCFLAGS) -ldflags "$(LDFLAGS)"
# The lite build for boards with little flash (docs/NOTES.md "The lite build"): the `lite` tag
# leaves out MQTT, rules, the VIP, mDNS, history and the admin's tools; -l (no inlining) trades
# some CPU for 1.2 MB.
LITE    := CGO_ENABLED=0 $(GO) build -trimpath -tags "$(TAGS) lite" $(shell bash scripts/gcflags.sh lite) -ldflags "$(LDFLAGS)"

.PHONY: help build check test flakes verify demo dist deb arm-smoke hil field clean bench-paper bench-paper-quick

help:
	@echo "make demo   - build and start a 3-board demo cluster on loopback (simulated boards)"
	@echo "make check  - the fast lane after changing a package: gofmt, vet, unit tests of every package (no e2e, browser, qemu)"
	@echo "make test   - all tests, what CI runs: vet, race tests, e2e, fuzz, browser, ARM smoke and HIL under qemu (installs what it needs)"
	@echo "make flakes - the tests N times under two busy loops from a clean clone; FLAKES='-n 5 e2e' picks runs and packages"
	@echo "make verify - the long proofs: the election's simulator over 10,000 seeds, then 5 min of nemesis on 5 boards checked for linearizability (VERIFY lines)"
	@echo "make hil    - hardware in the loop: every ARM build on a real Pi kernel under qemu-system (root; caches the kernel)"
	@echo "make field  - three boards booted from flashed SD-card images (Debian arm64, systemd) under qemu, one cluster, checked from outside (root; caches the OS; not in make test)"
	@echo "make build  - ./ews for this machine"
	@echo "make dist   - static binaries dist/ews-linux-{armv5,armv6,armv7,arm64,amd64} and dist/ews-lite-linux-armv5, with their sizes; SIGN=ADMIN-BUNDLE signs them"
	@echo "make deb    - dist, then dist/ews_<version>_{armhf,arm64,amd64}.deb (armhf from the armv6 build)"
	@echo "make bench-paper - the papers' experiments and claims vs HAProxy (~35 min on 2 cores: 35 min 18 s on 2026-12-02; 003's network cells add ~22 min, root): docs/bench-paper.md, docs/img/bench-paper-*.png"
	@echo "make bench-paper QUICK=1 - one verdict line per claim of papers 000-004 (testbed + takeover + 003's network cells, ~5 min; root adds ~3.5 min for scheme 3's three sites)"
	@echo "make bench-paper-quick - a reduced run of it (~10 min); BENCH_FLAGS adds flags to both"

build:
	$(BUILD) -o ews ./cmd/ews

demo: build
	./ews demo --nodes 3

check:
	bash scripts/test.sh check

test:
	bash scripts/test.sh

flakes:
	bash scripts/flakes.sh $(FLAKES)

verify:
	bash scripts/verify.sh

arm-smoke:
	bash scripts/arm-smoke.sh

hil:
	bash scripts/hil.sh

field:
	bash scripts/field.sh

# The paper's experiment (issue 6): every policy, a single board and HAProxy on one seeded stream.
# QUICK=1: one testbed cell per claim of papers 000-004 plus the takeover and 003's network cell, one verdict line each
# (paper NNN claim "..." verdict WORD figure ...); the full run adds every load to docs/bench-paper.md.
# Both write results/bench-paper/verdicts.json and render from it the verdict tables of docs/bench-paper.md and
# docs/performance.md (`go run ./cmd/benchpaper --headline` renders them alone; TestHeadlineTables holds them to it).
bench-paper: build
	[ "$$(id -u)" != 0 ] || bash scripts/deps.sh iproute2:ip # 003's network cells (root; else "not testable here")
ifeq ($(QUICK),)
	bash scripts/deps.sh haproxy
	$(GO) run ./cmd/benchpaper --ews ./ews --verdicts full $(BENCH_FLAGS)
else
	$(GO) run ./cmd/benchpaper --ews ./ews --verdicts quick $(BENCH_FLAGS)
endif

bench-paper-quick: build
	bash scripts/deps.sh haproxy
	$(GO) run ./cmd/benchpaper --ews ./ews --quick $(BENCH_FLAGS)

# armv6: Pi Zero/1 and Raspberry Pi OS armhf (armv7 binaries die there with "Illegal instruction").
# armv5: XScale (PXA255/PXA270) and ARM9 boards without VFP; soft float, kernel-helper atomics.
dist:
	mkdir -p dist
	GOOS=linux GOARCH=arm GOARM=5 $(BUILD) -o dist/ews-linux-armv5 ./cmd/ews
	GOOS=linux GOARCH=arm GOARM=6 $(BUILD) -o dist/ews-linux-armv6 ./cmd/ews
	GOOS=linux GOARCH=arm GOARM=7 $(BUILD) -o dist/ews-linux-armv7 ./cmd/ews
	GOOS=linux GOARCH=arm64 $(BUILD) -o dist/ews-linux-arm64 ./cmd/ews
	GOOS=linux GOARCH=amd64 $(BUILD) -o dist/ews-linux-amd64 ./cmd/ews
	GOOS=linux GOARCH=arm GOARM=5 $(LITE) -o dist/ews-lite-linux-armv5 ./cmd/ews
	@if [ -n "$(SIGN)" ]; then for b in ews-linux-armv5 ews-linux-armv6 ews-linux-armv7 ews-linux-arm64 ews-linux-amd64 ews-lite-linux-armv5; do \
		$(GO) run ./cmd/ews firmware sign --bundle "$(SIGN)" dist/$$b || exit 1; done; \
	else echo "make dist: unsigned builds (boards accept only signed firmware uploads: make dist SIGN=ADMIN-BUNDLE)"; fi
	@ls -l dist/
	@bash scripts/sizes.sh dist

# .debs built with the nfpm Go library (scripts/pkg); no outside tool needed.
deb: dist
	$(GO) run ./scripts/pkg --dist dist --version $(VERSION) --mtime $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
	@ls -l dist/*.deb

clean:
	rm -rf ews dist
