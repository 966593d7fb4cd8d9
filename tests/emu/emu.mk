# Emulated ConnectX port pair (test bed, not part of the daemon): the tc
# program tests/emu/emu_port.bpf.c and its loader/publisher build/emuport.
EMU_DIR := $(BUILD)/emu
EXTRA_BINS += $(BUILD)/emuport

$(EMU_DIR)/emu_port.bpf.o: tests/emu/emu_port.bpf.c tests/emu/emu.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -Itests/emu -c $< -o $@

$(EMU_DIR)/emu_port.skel.h: $(EMU_DIR)/emu_port.bpf.o
	$(BPFTOOL) gen skeleton $< name emu_port > $@.tmp && mv $@.tmp $@

# rxmode.c: the driver's receive-filter model, also linked into its unit
# test (tests/unit/test_emu_rxmode.c)
EMU_SRCS := tests/emu/emuport.c tests/emu/rxmode.c
$(BUILD)/emuport: $(EMU_SRCS) tests/emu/rxmode.h tests/emu/emu.h $(EMU_DIR)/emu_port.skel.h
	@mkdir -p $(dir $@)
	$(COMPILE) -I$(EMU_DIR) -Itests/emu $(NS_LDFLAGS) $(LDFLAGS) -o $@ $(EMU_SRCS) $(NS_LDLIBS) $(LDLIBS)
$(BUILD)/tests/test_emu_rxmode: $(BUILD)/tests/emu/rxmode.o

all system: $(BUILD)/emuport
