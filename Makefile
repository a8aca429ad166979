# SPDX-License-Identifier: MIT
#
# hpu: one entry point.
#   make run       set up what is missing, build, boot a guest with two HPUs: the operator's
#                  view (hpu-smi, sensors, devlink), then the PyTorch guide's getting-started
#                  script (tools/hpu-train/getting_started_hpu.py: the seed's model on
#                  Fashion-MNIST, lazy mode) beside its CPU twin run on the host, loss per
#                  epoch and test accuracy side by side (Documentation/pytorch.md);
#                  make run-libhpu: the libhpu C++ trainer instead (Documentation/training.md)
#   make test      every check and test (host and VM), ending with "N passed, N failed"
#   make test-interop only the interop run: the HPU's RoCE v2 against Linux rxe in a
#                  second guest, and rxe against rxe beside it for the figures
#                  (tests/vm/interop/run-interop.sh $(INTEROP_FLAGS); make test runs
#                  the HPU pair), logs and figures in $(BUILD)/interop/
#   make test-mpi  only the MPI run (also part of make test): Open MPI + UCX across two HPU
#                  guests, an allreduce of HBM buffers (tests/vm/mpi/run-mpi.sh $(MPI_FLAGS)),
#                  logs and figures in $(BUILD)/mpi/
#   make bench     benchmarks
#   make test-debug the VM suite on a debug kernel (KASAN, lockdep, kmemleak, DMA-API
#                  debug, failslab) built from linux-source-6.12, cached by hash
#   make kunit     only the driver's KUnit suites (kernel/tests/), in that debug kernel
#   make fuzz      the device-model fuzzer for FUZZ_MODEL_TIME seconds, then the ioctl
#                  fuzzer, 10^7 calls with fresh seeds in a guest with two HPUs
#                  (FUZZ_CALLS, FUZZ_TIME seconds, FUZZ_FLAGS: extra hpu-fuzz options)
#   make vm-shell  an interactive guest with two HPUs and the driver's build tree
#   make run-cnn   the PyTorch guide's second example: a small CNN trained on the HPU with
#                  hpu_torch in a guest, after the same script on the host CPU (CNN_FLAGS)
#   make install   install the built stack (Documentation/install.md): libhpu, headers,
#                  pkg-config and CMake files, hpu-smi, hpu-fwpack, hpu-as, the TPC
#                  kernels, man pages, hpu_torch, the firmware (/lib/firmware/hpu), the
#                  udev rule, the rdma-core provider, the driver's DKMS source
#                  (/usr/src/hpu-$(VERSION)); PREFIX (default /usr/local), DESTDIR,
#                  INSTALL_WITHOUT=part,... (parts: packaging/hpu-install.py)
#   make uninstall remove exactly what make install put there (same PREFIX and DESTDIR)
#   make dkms-source  only the DKMS source tree in $(DESTDIR)/usr/src/hpu-$(VERSION)
#   make deb       the Debian packages (hpu-dkms, hpu-firmware, libhpu1, libhpu-dev,
#                  hpu-tools, ibverbs-provider-hpu, python3-hpu-torch) in $(BUILD)/deb,
#                  lintian-checked; DEB_VERSION (default: the VERSION file)
#   make test-install  the packages on a clean machine: install, DKMS, a guest booted
#                  on it, upgrade, purge (tests/install/test-deb.sh; about 8-15 minutes)
# Other targets: bootstrap, qemu, kernel, user, rdma-provider, check, clean.

SHELL := /bin/bash
export HPU_CACHE ?= /var/cache/hpu
BUILD ?= build
# The release version of the stack, one place (also read by CMake and the DKMS tree).
VERSION := $(shell cat VERSION)
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_WITHOUT ?=
# no: write no install manifest (for a package build, issue 15 part 2)
INSTALL_MANIFEST ?= yes
BUILD_SAN ?= build-san
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

# The two demo devices: sizes and serials that `make run` and the VM tests use.
RUN_HPUS := --hpu hbm-size=2G,serial=HPU-DEMO-0,nic-ports=10 \
	    --hpu hbm-size=4G,serial=HPU-DEMO-1,nic-ports=4

.PHONY: all bootstrap qemu kernel user rdma-provider user-san check run run-torch run-libhpu test test-interop test-mpi test-debug kunit bench fuzz vm-shell clean install uninstall dkms-source deb test-install

all: bootstrap qemu kernel user rdma-provider

bootstrap:
	@bash tools/dev/bootstrap.sh

qemu: bootstrap
	@bash tools/dev/build-qemu.sh >/dev/null

kernel: bootstrap
	@$(MAKE) --no-print-directory -C kernel

user: bootstrap
	@[ -f $(BUILD)/build.ninja ] || cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null
	@ninja -C $(BUILD) --quiet

# The rdma-core verbs provider (Documentation/rdma.md), built in rdma-core
# 56.1's source tree (downloaded by bootstrap) under $(BUILD)/rdma-provider.
# The last prerequisite of `all`: the other parts are built before it runs.
rdma-provider: bootstrap
	@bash tools/rdma-provider/build.sh --out $(BUILD)/rdma-provider >/dev/null

user-san: bootstrap
	@[ -f $(BUILD_SAN)/build.ninja ] || cmake -S . -B $(BUILD_SAN) -G Ninja \
		-DCMAKE_BUILD_TYPE=Debug "-DHPU_SANITIZE=address;undefined" >/dev/null
	@ninja -C $(BUILD_SAN) --quiet

check: all
	@python3 tools/dev/check-regs.py
	@bash tools/dev/check-uapi-padding.sh
	@python3 tools/dev/check-docs.py
	@bash tools/dev/check-kernel.sh
	@bash tools/dev/check-emu.sh
	@bash tools/dev/check-tidy.sh $(BUILD)

# The CPU reference of the training demo runs natively on the host (the
# guest's CPU is emulated), once per build of hpu-train; the guest compares.
# make run: the operator's view, then the getting-started PyTorch script
# (tools/hpu-train/getting_started_hpu.py, Documentation/pytorch.md) trains
# the seed's model on the HPU in lazy mode, beside its CPU twin
# getting_started_cpu.py run on the host (natively, cached until the
# script changes). make
# run-libhpu: the operator's view, then the libhpu C++ trainer
# (Documentation/training.md), its dataset inflated once on the host (the
# guest would take seconds). make run-torch is make run.
TRAIN := $(BUILD)/tools/hpu-train/hpu-train
TRAIN_DATA := $(BUILD)/train/data
TORCH_DEMO := tools/hpu-train/getting_started_cpu.py
run-libhpu: all
	@mkdir -p $(TRAIN_DATA) && for f in /usr/share/datasets/fashion-mnist/*-ubyte.gz; do \
		o=$(TRAIN_DATA)/$$(basename $$f .gz); [ -s $$o ] || { gzip -dc $$f > $$o.tmp && mv $$o.tmp $$o; } || exit 1; \
	done
	@set -o pipefail; for m in linear mlp; do \
		f=$(BUILD)/train/cpu-$$m.txt; [ "$$f" -nt $(TRAIN) ] && continue; \
		echo "hpu-train: the $$m model on the host CPU (the reference for the HPU run)"; \
		rm -f $$f.tmp; \
		$(TRAIN) --device cpu --model $$m --data $(TRAIN_DATA) --save $$f.tmp | tail -n 1 && mv $$f.tmp $$f || exit 1; \
	done
	@tools/dev/vm/hpu-vm $(RUN_HPUS) --timeout 900 --env HPU_BUILD=$(abspath $(BUILD)) -- tests/vm/demo.sh libhpu

run-torch: run
run: all
	@mkdir -p $(BUILD)/train && f=$(BUILD)/train/torch-cpu.txt; \
	if [ ! "$$f" -nt $(TORCH_DEMO) ]; then \
		echo "getting_started_cpu.py (on the host: the reference for the HPU run)"; \
		set -o pipefail; /usr/bin/python3 $(TORCH_DEMO) | tee $$f.tmp && mv $$f.tmp $$f || exit 1; \
	fi
	@tools/dev/vm/hpu-vm $(RUN_HPUS) --mem 3G --timeout 900 --env HPU_BUILD=$(abspath $(BUILD)) -- tests/vm/demo.sh torch

# The small CNN of the PyTorch guide (tools/hpu-train/torch_fashion_mnist.py
# --model cnn): the host CPU's run first (the reference: the same batches and
# initial weights), then the HPU's in a guest, eager. The default, 2 epochs of
# the first 6400 images of each set, takes about 5 minutes (about 1 s per
# step of 128 images in the guest).
CNN_FLAGS ?= --epochs 2 --limit 6400
.PHONY: run-cnn
run-cnn: all
	@PYTHONPATH=$(BUILD)/python /usr/bin/python3 tools/hpu-train/torch_fashion_mnist.py --model cnn --device cpu $(CNN_FLAGS)
	@tools/dev/vm/hpu-vm $(RUN_HPUS) --timeout 1200 -- sh -c \
		'modprobe -a drm drm_buddy drm_shmem_helper gpu-sched && insmod $(CURDIR)/kernel/hpu.ko && \
		 PYTHONPATH=$(abspath $(BUILD))/python /usr/bin/python3 $(CURDIR)/tools/hpu-train/torch_fashion_mnist.py \
		 --model cnn $(CNN_FLAGS)'

test: all user-san
	@python3 tests/run-tests.py --build $(BUILD) --build-san $(BUILD_SAN)

# e.g. INTEROP_FLAGS="--pairs hpu --only 'ib_write_bw' --keep-pcap" (see the script's --help)
test-interop: all
	@HPU_BUILD=$(abspath $(BUILD)) bash tests/vm/interop/run-interop.sh --log $(BUILD)/interop $(INTEROP_FLAGS)

# e.g. MPI_FLAGS="--cases hpu:hbm --sizes 1M:64M --iters 2" (see the script's --help)
test-mpi: all
	@HPU_BUILD=$(abspath $(BUILD)) bash tests/vm/mpi/run-mpi.sh --log $(BUILD)/mpi $(MPI_FLAGS)

# hpu.ko for the debug kernel is built in a copy of kernel/, so that the
# work tree's module (for the reference kernel) stays as it is; with it
# hpu_kunit.ko, the KUnit suites (the debug kernel has CONFIG_KUNIT), which
# tests/vm/guest-suite.sh runs when it finds it next to hpu.ko.
KO_DEBUG = \
	ver=$$(bash tools/dev/build-debug-kernel.sh) && kdir=$$(bash tools/dev/build-debug-kernel.sh --print-kdir) && \
	rm -rf $(BUILD)/kernel-debug && mkdir -p $(BUILD)/kernel-debug/tests && \
	cp kernel/*.[ch] kernel/Kbuild kernel/Makefile $(BUILD)/kernel-debug/ && \
	cp kernel/tests/*.[ch] $(BUILD)/kernel-debug/tests/ && \
	ln -sfn $(CURDIR)/include $(BUILD)/include && \
	$(MAKE) --no-print-directory -s -C $(BUILD)/kernel-debug KDIR=$$kdir

test-debug: all
	@$(KO_DEBUG) && \
	python3 tests/run-tests.py --build $(BUILD) --debug-kernel $$ver \
		--ko $(CURDIR)/$(BUILD)/kernel-debug/hpu.ko

# Only the KUnit suites, in the debug kernel, with hpu.ko loaded (they link
# against it) and no HPU (they need none); logs in $(BUILD)/vm-test-kunit/.
kunit: bootstrap qemu
	@$(KO_DEBUG) && mkdir -p $(BUILD)/vm-test-kunit && \
	tools/dev/vm/hpu-vm --kernel $$ver --append no5lvl --timeout 1200 --log $(BUILD)/vm-test-kunit -- sh -c \
		'modprobe -a drm drm_buddy drm_shmem_helper gpu-sched && \
		 insmod $(CURDIR)/$(BUILD)/kernel-debug/hpu.ko && \
		 tests/vm/kunit.sh $(CURDIR)/$(BUILD)/kernel-debug/hpu_kunit.ko'

bench: all
	@python3 tests/bench/run-bench.py --build $(BUILD)

FUZZ_CALLS ?= 10000000
FUZZ_TIME ?= 7200
FUZZ_FLAGS ?=
FUZZ_MODEL_TIME ?= 600
fuzz: all
	@rc=0; \
	python3 tests/fuzz/fuzz_model.py --rounds 1000000 --actions 20000 \
		--time-limit $$(($(FUZZ_MODEL_TIME) / 2)) || rc=1; \
	python3 tests/fuzz/fuzz_model.py --hotplug --rounds 1000000 --actions 20000 \
		--time-limit $$(($(FUZZ_MODEL_TIME) / 2)) || rc=1; \
	python3 tests/fuzz/run-fuzz.py --build $(BUILD) --calls $(FUZZ_CALLS) --time $(FUZZ_TIME) \
		--flags="$(FUZZ_FLAGS)" || rc=1; \
	exit $$rc

# make install runs nothing as root that `make` would not: it brings the
# user-space build up to date (ninja), then packaging/hpu-install.py stages
# each part (cmake --install per component, the rest itself) and copies it
# into $(DESTDIR), writing $(PREFIX)/share/hpu/install-manifest for
# make uninstall. The rdma-core provider must be built (make rdma-provider)
# unless INSTALL_WITHOUT names rdma.
HPU_INSTALL = python3 packaging/hpu-install.py --build $(BUILD) --prefix $(PREFIX) --destdir "$(DESTDIR)" \
	$(if $(filter no,$(INSTALL_MANIFEST)),--no-manifest)
install:
	@[ -f $(BUILD)/build.ninja ] || { echo "make install: $(BUILD) is not built; run make first" >&2; exit 1; }
	@ninja -C $(BUILD) --quiet
	@$(HPU_INSTALL) install --without "$(INSTALL_WITHOUT)"

uninstall:
	@$(HPU_INSTALL) uninstall

dkms-source:
	@$(HPU_INSTALL) install --only dkms

# The packages are made of what `make all` built (packaging/debian/rules
# installs each with hpu-install.py, the program behind make install).
DEB_VERSION ?= $(shell head -n1 VERSION)
deb: all
	@bash packaging/build-deb.sh $(BUILD) $(BUILD)/deb $(DEB_VERSION)

test-install: all
	@bash tests/install/test-deb.sh $(BUILD)

vm-shell: all
	@tools/dev/vm/hpu-vm $(RUN_HPUS) --shell

clean:
	-@$(MAKE) --no-print-directory -C kernel clean
	rm -rf $(BUILD) $(BUILD_SAN)
