# smartio — top-level convenience targets.
#   make demo   install missing Debian packages, build, start the default cluster,
#               show it, stop it
#   make test   install missing Debian packages, build, run every test suite
#               (plain build, then AddressSanitizer + UndefinedBehaviorSanitizer)

BUILD     ?= build
BUILD_SAN ?= build-san
BUILD_TSAN ?= build-tsan
# Suites whose code runs threads (device models); run under ThreadSanitizer.
TSAN_SUITES ?= devrun nvme_drv accel_drv sisci_intr sisci_dma sisci_segment
MESON     ?= meson
CC        ?= cc

DEB_PACKAGES = meson ninja-build pkg-config gcc clang libfyaml-dev libcmocka-dev \
               libpci-dev pciutils pci.ids graphviz gnuplot-nox libclang-rt-14-dev bc libnvme-dev nvme-cli \
               python3 procps

.PHONY: all deps build demo test test-plain test-san test-tsan fuzz bench clean install

all: build

# Install only what is missing; apt-get needs root (or sudo).
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(BUILD)/build.ninja:
	$(MESON) setup $(BUILD) --werror

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

demo: build
	./demo/run.sh $(BUILD)

test-plain: build
	$(MESON) test -C $(BUILD) --print-errorlogs --verbose

$(BUILD_SAN)/build.ninja:
	CC=clang $(MESON) setup $(BUILD_SAN) --werror -Db_sanitize=address,undefined -Db_lundef=false

test-san: deps $(BUILD_SAN)/build.ninja
	ninja -C $(BUILD_SAN)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(MESON) test -C $(BUILD_SAN) --print-errorlogs --verbose

$(BUILD_TSAN)/build.ninja:
	CC=clang $(MESON) setup $(BUILD_TSAN) --werror -Db_sanitize=thread -Db_lundef=false

test-tsan: deps $(BUILD_TSAN)/build.ninja
	ninja -C $(BUILD_TSAN)
	TSAN_OPTIONS=halt_on_error=1 $(MESON) test -C $(BUILD_TSAN) --no-rebuild \
	  --print-errorlogs --verbose $(TSAN_SUITES)

test: build
	./.ci/run-tests

fuzz: deps
	CC=clang $(MESON) setup build-fuzz -Dfuzz=true -Dtests=false --werror 2>/dev/null || true
	ninja -C build-fuzz
	./fuzz/run.sh build-fuzz

bench: build
	./bench/run-all.sh $(BUILD)

# DIR/include, DIR/lib (and DIR/lib64 as a link), DIR/lib/pkgconfig/sisci.pc.
install: build
	@test -n "$(PREFIX)" || { echo "usage: make install PREFIX=DIR"; exit 2; }
	$(MESON) configure $(BUILD) -Dprefix=$(abspath $(PREFIX)) -Dlibdir=lib
	$(MESON) install -C $(BUILD) --quiet
	ln -sfn lib $(abspath $(PREFIX))/lib64

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_TSAN) build-fuzz
