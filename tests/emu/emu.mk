# Emulated ConnectX port pair (test bed, not part of the daemon): the tc
# program tests/emu/emu_port.bpf.c and its loader/publisher build/emuport
# (emuport.h names its files).
EMU_DIR := $(BUILD)/emu
EXTRA_BINS += $(BUILD)/emuport

$(EMU_DIR)/emu_port.bpf.o: tests/emu/emu_port.bpf.c tests/emu/emu.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -Itests/emu -c $< -o $@

$(EMU_DIR)/emu_port.skel.h: $(EMU_DIR)/emu_port.bpf.o
	$(BPFTOOL) gen skeleton $< name emu_port > $@.tmp && mv $@.tmp $@

# Every tests/emu/*.c but the tc program; rxmode.c (the driver's
# receive-filter model) is also linked into its unit test
# (tests/unit/test_emu_rxmode.c).  Objects are built by the top-level
# $(BUILD)/%.o rule; only emu_bpf.o includes the skeleton and waits for it.
# The link names the objects, not $^: a build directory from before the
# split has an emuport.d that lists sources as prerequisites.
EMU_SRCS := $(filter-out %.bpf.c,$(wildcard tests/emu/*.c))
EMU_OBJS := $(EMU_SRCS:%.c=$(BUILD)/%.o)
$(BUILD)/tests/emu/emu_bpf.o: NS_CPPFLAGS += -I$(EMU_DIR)
$(BUILD)/tests/emu/emu_bpf.o: $(EMU_DIR)/emu_port.skel.h
$(BUILD)/emuport: $(EMU_OBJS)
	$(LINK) -o $@ $(EMU_OBJS) $(NS_LDLIBS) $(LDLIBS)
$(BUILD)/tests/test_emu_rxmode: $(BUILD)/tests/emu/rxmode.o

all system: $(BUILD)/emuport
