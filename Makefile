# nicstalld: top-level build. `make`, `make check`, `make demo`, `make bench`,
# `make install PREFIX=... DESTDIR=...`.  See README.md.

PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build
SAN      ?=
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo 0.1)

SYSCONFDIR ?= /etc
DATADIR    ?= $(PREFIX)/share/nicstalld
MANDIR     ?= $(PREFIX)/share/man
UNITDIR    ?= /lib/systemd/system

PKGS     := libmnl json-c libpcap libbpf libsystemd libibverbs libcrypto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

ifeq ($(SAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT       := -O1 -g
else
SAN_FLAGS :=
OPT       := -O2 -g
endif

# Flags the build needs are kept apart from CFLAGS/CPPFLAGS/LDFLAGS, so a
# user's `make CFLAGS=-O0` adds to them instead of replacing them.
CFLAGS   ?= $(OPT)
NS_CPPFLAGS := -D_GNU_SOURCE -I. -Iinclude -I$(BUILD) \
	    -DNICSTALL_VERSION=\"$(VERSION)\" -DNICSTALL_SYSCONFDIR=\"$(SYSCONFDIR)\" \
	    -DNICSTALL_DATADIR=\"$(DATADIR)\" $(PKG_CFLAGS)
NS_CFLAGS   := -std=gnu17 -Wall -Wextra -Werror -MMD -MP $(SAN_FLAGS)
NS_LDFLAGS  := $(SAN_FLAGS)
NS_LDLIBS   := $(PKG_LIBS) -lelf -lz -lm
COMPILE     = $(CC) $(NS_CPPFLAGS) $(CPPFLAGS) $(NS_CFLAGS) $(CFLAGS)
LINK        = $(CC) $(NS_LDFLAGS) $(LDFLAGS)

# The layers, lowest first (see README "Layout"); every .c in them but the
# mains and the BPF programs goes into one static library that binaries and
# tests link against, so a unit test pulls in only the modules it uses.
LAYERS    := lib collectors probes rules bundle daemon client
MAINS     := daemon/main.c client/nicstallctl.c
LIB_SRCS  := $(filter-out $(MAINS) %.bpf.c,$(foreach d,$(LAYERS),$(wildcard $(d)/*.c)))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
BPF_SRCS  := $(wildcard collectors/*.bpf.c)
BPF_OBJS  := $(BPF_SRCS:collectors/%.bpf.c=$(BUILD)/%.bpf.o)
SKELS     := $(BPF_SRCS:collectors/%.bpf.c=$(BUILD)/%.skel.h)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# helpers shared by unit tests: every tests/unit/*.c that is not a test
TEST_SUPPORT_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(filter-out $(UNIT_SRCS),$(wildcard tests/unit/*.c)))

BINS := $(BUILD)/nicstalld $(BUILD)/nicstallctl

.DEFAULT_GOAL := all
.SECONDARY:
.PHONY: FORCE all deps check unit unit-run unit-asan system system-asan demo bench install clean layering
all: $(BINS)

# Subsystems (emulator, example engine, benchmarks) add their own fragments;
# they add their binaries to `all` themselves.
-include $(sort $(wildcard tests/*/*.mk bench/*.mk examples/*.mk))

# Rebuild when the installation paths or sanitizers change: they are
# compiled in (the rules directory, the configuration path).
FLAGS_STAMP := $(BUILD)/.flags
FLAGS_NOW := $(SYSCONFDIR) $(DATADIR) $(SAN) $(CFLAGS) $(CPPFLAGS)
$(FLAGS_STAMP): FORCE
	@mkdir -p $(BUILD)
	@echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' > $@
FORCE:

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(COMPILE) -c -o $@ $<

# BPF: collectors/NAME.bpf.c -> NAME.bpf.o -> NAME.skel.h (never committed).
# Only the loader that includes a skeleton waits for it.
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror -MMD -MP \
	      -I/usr/include/$(shell uname -m)-linux-gnu -I. -Iinclude
$(BUILD)/%.bpf.o: collectors/%.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@
$(BUILD)/collectors/flowtrack.o $(BUILD)/collectors/flowtrack_read.o: $(BUILD)/flowtrack.skel.h
$(BUILD)/collectors/sockread.o: $(BUILD)/sockread.skel.h

$(BUILD)/libnicstall.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/nicstalld: $(BUILD)/daemon/main.o $(BUILD)/libnicstall.a
	$(LINK) -o $@ $^ $(NS_LDLIBS) $(LDLIBS)
$(BUILD)/nicstallctl: $(BUILD)/client/nicstallctl.o $(BUILD)/libnicstall.a
	$(LINK) -o $@ $^ $(NS_LDLIBS) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(TEST_SUPPORT_OBJS) $(BUILD)/libnicstall.a
	@mkdir -p $(dir $@)
	$(LINK) -o $@ $^ -lcmocka $(NS_LDLIBS) $(LDLIBS)

# Includes may only point down the layers (tools/layering.sh).
layering:
	@tools/layering.sh

deps:
	@tools/deps.sh

unit-run: $(UNIT_BINS)
	@tests/run-unit.sh $(BUILD) $(UNIT_BINS)

unit: deps
	@$(MAKE) --no-print-directory unit-run

unit-asan:
	@$(MAKE) --no-print-directory BUILD=build-asan SAN=1 unit-run

system: all $(EXTRA_BINS)
	@tests/system/run.sh $(BUILD)

# The daemon itself under ASan+UBSan through the tests that exercise most
# of it (leaks are reported when it exits and fail the test).
SYSTEM_ASAN_TESTS ?= snapshot_veth|control|forensic|emu_scenarios|hostile_tables
system-asan:
	@$(MAKE) --no-print-directory BUILD=build-asan SAN=1 all system-bins
	@NICSTALL_TESTS='$(SYSTEM_ASAN_TESTS)' tests/system/run.sh build-asan

# The README's test command: set-up, build, unit tests (plain and under
# ASan+UBSan), system tests, one closing line.
check: deps
	@rm -f $(BUILD)/results build-asan/results
	@$(MAKE) --no-print-directory all
	@tools/layering.sh > $(BUILD)/layering.log 2>&1; rc=$$?; cat $(BUILD)/layering.log; \
	 echo "PASS $$((1 - (rc != 0))) FAIL $$((rc != 0))" >> $(BUILD)/results
	@$(MAKE) --no-print-directory unit-run; \
	 $(MAKE) --no-print-directory unit-asan; \
	 $(MAKE) --no-print-directory system; \
	 $(MAKE) --no-print-directory system-asan; \
	 tools/summary.sh $(BUILD)/results build-asan/results

# deps first, then a fresh make: pkg-config flags are read when make starts,
# so on a new machine they exist only after deps installed the libraries.
demo: deps
	@$(MAKE) --no-print-directory all
	@tests/demo/demo.sh $(BUILD) $(SCENARIO)

bench: deps
	@$(MAKE) --no-print-directory all
	@bench/run.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/nicstalld $(DESTDIR)$(PREFIX)/sbin/nicstalld
	install -m 0755 $(BUILD)/nicstallctl $(DESTDIR)$(PREFIX)/bin/nicstallctl
	install -d $(DESTDIR)$(DATADIR)/rules
	for f in $(wildcard rules/*.rules); do install -m 0644 $$f $(DESTDIR)$(DATADIR)/rules/; done
	install -d $(DESTDIR)$(PREFIX)/include/nicstall
	for f in $(wildcard include/nicstall/*.h); do install -m 0644 $$f $(DESTDIR)$(PREFIX)/include/nicstall/; done
	for s in 5 7 8; do \
	  for f in $$(ls man/*.$$s 2>/dev/null); do \
	    install -d $(DESTDIR)$(MANDIR)/man$$s; install -m 0644 $$f $(DESTDIR)$(MANDIR)/man$$s/; done; done
	install -d $(DESTDIR)$(SYSCONFDIR)/nicstalld/rules.d
	[ -e $(DESTDIR)$(SYSCONFDIR)/nicstalld/nicstalld.conf ] || \
	  install -m 0644 systemd/nicstalld.conf.example $(DESTDIR)$(SYSCONFDIR)/nicstalld/nicstalld.conf
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|/usr/local/sbin/nicstalld|$(PREFIX)/sbin/nicstalld|' systemd/nicstalld.service > $(DESTDIR)$(UNITDIR)/nicstalld.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/nicstalld.service

clean:
	rm -rf build build-asan

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
