# smartio — top-level convenience targets.
#   make demo   install missing Debian packages, build, start the default cluster,
#               show it, stop it
#   make test   install missing Debian packages, build, run every test suite
#               (plain build, then AddressSanitizer + UndefinedBehaviorSanitizer)
#   make control-plane   the daemons' control plane, this tree vs an older one
#   make faults the fault matrix: lost/corrupted writes and failover times per fault
#   make cluster60  30 clients sharing one NVMe on the 60-host cluster (fairness)
#   make install PREFIX=DIR (default /usr/local): tools, libraries, man pages,
#               completion, the fio engine if built (docs/install.md)
#   make vm     the QEMU build with smartio's device and the guest image
#               (make vm-qemu, make vm-image; docs/vm.md), cached outside the tree
#   make vm-bench  one NVMe, three drivers: a VM's own nvme driver (MDEV), the
#               host's in-kernel driver (Device Lending), the userspace driver;
#               and SmartIO fig. 31 (bare metal vs MDEV) by the timing model
#   make fuzz   every libFuzzer target for FUZZ_SECONDS (60) each, then a table

BUILD     ?= build
BUILD_SAN ?= build-san
BUILD_TSAN ?= build-tsan
# Suites whose code runs threads (device models, and every daemon: its loop,
# workers and device threads); run under ThreadSanitizer. die_after_fork=0: SISCI
# tests fork children from a process whose library already runs threads (a
# connection's watcher), as SISCI programs may; tests/tsan.supp says what is
# suppressed and why.
TSAN_SUITES ?= devrun nvme_drv accel_drv sisci_intr sisci_dma sisci_segment sisci_fault lend lend_fault \
               nvme_drv_borrowed accel_drv_borrowed lend_cli nvme_dist util \
               daemon segment cli cluster60 sisci sisci_register sisci_device nvme_dist_cli \
               daemon_load
# smartio web: its collector, the server's connection threads and the actions.
TSAN_SUITES += web_api
MESON     ?= meson
FUZZ_SECONDS ?= 60
CC        ?= cc

DEB_PACKAGES = meson ninja-build pkg-config gcc clang libfyaml-dev libcmocka-dev \
               libpci-dev pciutils pci.ids graphviz gnuplot-nox libclang-rt-14-dev bc libnvme-dev nvme-cli \
               python3 procps fuse3 libfuse3-dev e2fsprogs fio util-linux \
               libjson-c-dev libsystemd-dev lowdown
# smartio web's HTTP server (docs/web.md).
DEB_PACKAGES += libmicrohttpd-dev
# Only for tests, installed by `make test`: web_test.py drives the page in
# headless Chromium (it skips without them); nvme_fair_test.sh reads JSON with jq;
# nvme_p2p_test.sh and accel_kernel_test.sh check CRC32C of 64/256 MiB with
# crcmod's C extension (/usr/bin/python3), independent of the accelerator's own.
TEST_DEB_PACKAGES = chromium chromium-driver python3-selenium jq python3-crcmod

# The fio ioengine (tools/fio) is compiled against the installed fio's own
# headers, taken from Debian's fio source package at build time; its configure
# needs these to reproduce the binary's structures (docs/fio-engine.md).
FIO_DEB_PACKAGES = fio dpkg-dev libaio-dev libnuma-dev librdmacm-dev libibverbs-dev \
                   libnbd-dev zlib1g-dev
# smartio vm (docs/vm.md): QEMU from Debian's qemu source package with our
# device compiled in (its build dependencies, its firmware), and the guest
# image (busybox-static; the kernel is downloaded, not installed).
VM_DEB_PACKAGES = dpkg-dev libglib2.0-dev libpixman-1-dev libfdt-dev flex bison \
                  python3-venv qemu-system-data seabios busybox-static cpio file \
                  e2fsprogs nvme-cli fio
# bench/nvme-peers: the peers it compares with (nbdkit, fio's nbd/psync/io_uring engines).
BENCH_DEB_PACKAGES = fio nbdkit gnuplot-nox python3

.PHONY: all deps build demo test test-plain test-san test-tsan fuzz bench figures clean install
.PHONY: deps-fio deps-bench deps-test fio-engine nvme-peers control-plane faults cluster60
.PHONY: deps-vm vm vm-qemu vm-image vm-bench

# $(call apt_missing,PACKAGES): install those not installed yet (root or sudo).
define apt_missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
endef

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

# The fio engine needs Debian's fio source (network); without it its test skips.
test-plain: build
	@$(MAKE) --no-print-directory fio-engine || \
	  echo "note: the fio engine was not built (see above); the fio_engine test skips"
	@$(MAKE) --no-print-directory vm || \
	  echo "note: QEMU or the guest image was not built (see above); the vm test skips"
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
	TSAN_OPTIONS="halt_on_error=1 die_after_fork=0 suppressions=$(CURDIR)/tests/tsan.supp" \
	  $(MESON) test -C $(BUILD_TSAN) --no-rebuild \
	  --print-errorlogs --verbose $(TSAN_SUITES)

test: build deps-test
	./.ci/run-tests

# Every fuzz target for FUZZ_SECONDS each, then a table of edges and executions
# (docs/protocol.md, "Fuzzing"). fuzz_daemon's peers are the normal build's smartiod.
fuzz: build
	@if [ -f build-fuzz/build.ninja ]; then \
	  $(MESON) configure build-fuzz -Dfuzz=true -Dtests=false -Db_lundef=false; \
	else \
	  CC=clang $(MESON) setup build-fuzz -Dfuzz=true -Dtests=false -Db_lundef=false --werror; \
	fi
	ninja -C build-fuzz
	SMARTIOD=$(abspath $(BUILD))/src/daemon/smartiod ./fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

bench: build
	./bench/run-all.sh $(BUILD)

# The papers' experiments: model vs stated numbers vs the emulated cluster
# (docs/timing-model.md, "Figures"); results in bench/out/figures/.
figures: build
	./bench/figures $(BUILD)

deps-fio:
	$(call apt_missing,$(FIO_DEB_PACKAGES))

deps-bench:
	$(call apt_missing,$(BENCH_DEB_PACKAGES))

deps-test:
	$(call apt_missing,$(TEST_DEB_PACKAGES))

deps-vm:
	$(call apt_missing,$(VM_DEB_PACKAGES))

# ${XDG_CACHE_HOME:-~/.cache}/smartio/qemu-system-x86_64 (the first build takes
# minutes; reused while Debian's qemu version and tools/qemu/smartio-mdev.c stay).
vm-qemu: deps-vm
	./tools/qemu/build-qemu.sh

# ${XDG_CACHE_HOME:-~/.cache}/smartio/image/{vmlinuz,initrd.img}, with the
# guest tools of tools/vm/guest (built first).
vm-image: deps-vm build
	./tools/vm/build-image.sh $${XDG_CACHE_HOME:-$$HOME/.cache}/smartio/image \
	  $(BUILD)/tools/vm/guest/smartio-stray-dma

vm: vm-qemu vm-image

# 4 KiB random reads QD1/QD32 of one NVMe by a guest's nvme driver, the host's
# in-kernel driver and the userspace driver, plus the model's fig. 31
# (docs/benchmarks.md); about 3 minutes. It does not build QEMU or the image
# (make vm): without them it skips the VM row and says why. VM_BENCH_ARGS e.g.
# --seconds 10 --reps 5. Results in bench/out/vm.{txt,json,png}.
vm-bench: fio-engine deps-bench
	./bench/vm $(BUILD) $(VM_BENCH_ARGS)

# build/tools/fio/smartio-fio.so (fetches fio's source: needs the network once).
fio-engine: build deps-fio
	$(MESON) configure $(BUILD) -Dfio_engine=true
	ninja -C $(BUILD) tools/fio/smartio-fio.so

# 4 KiB random reads: our driver (local, borrower) vs nbdkit, psync, io_uring.
nvme-peers: fio-engine deps-bench
	./bench/nvme-peers $(BUILD)

# The daemons' control plane (route, lspci, segments, device pool) with 1/8/64
# clients on 3 and 60 hosts, this tree vs the tree at 567fb41 built alongside
# (docs/benchmarks.md); 6.5-8.5 minutes. CONTROL_PLANE_ARGS=--quick for a smoke
# run, --before REF for another baseline. Results in bench/out/control-plane/.
control-plane: build
	./bench/control-plane $(BUILD) $(CONTROL_PLANE_ARGS)

# The fault matrix of the distributed NVMe driver on topologies/multipath.yaml
# (docs/reliability.md): about 8 minutes; FAULTS_ARGS=--quick for under 5.
faults: build deps-bench
	./bench/faults $(BUILD) $(FAULTS_ARGS)

# The 60-host experiments of the paper's sec. 7.4.2 (docs/benchmarks.md): 30
# clients on one NVMe under round robin, equal and unequal weighted round
# robin; about 2 minutes. CLUSTER60_ARGS e.g. --seconds 20. Results in
# bench/out/cluster60/.
cluster60: build deps-bench
	./bench/cluster60 $(BUILD) $(CLUSTER60_ARGS)

# The tools (PREFIX/bin), libsisci and libsmartio-nvme with headers and
# sisci.pc (PREFIX/lib, PREFIX/include), man pages, bash completion, the docs,
# the nvme-cli shim and, when built (`make fio-engine` first), the fio engine
# under PREFIX/lib/smartio (docs/install.md). PREFIX/lib64 is a link to lib
# unless it exists. Installed programs find their libraries relative to
# themselves: no ldconfig, no LD_LIBRARY_PATH.
PREFIX ?= /usr/local
install: build
	$(MESON) configure $(BUILD) -Dprefix=$(abspath $(PREFIX)) -Dlibdir=lib
	$(MESON) install -C $(BUILD) --quiet
	@[ -e $(abspath $(PREFIX))/lib64 ] || ln -s lib $(abspath $(PREFIX))/lib64
	@[ -e $(abspath $(PREFIX))/lib/smartio/fio/smartio-fio.so ] || \
	  echo "note: no fio engine installed (make fio-engine, then make install again)"
	@echo "installed in $(abspath $(PREFIX)); add it to PATH: export PATH=\"$(abspath $(PREFIX))/bin:\$$PATH\""

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_TSAN) build-fuzz
