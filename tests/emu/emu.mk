# Emulated ConnectX port pair (test bed, not part of the daemon): the tc
# program tests/emu/emu_port.bpf.c and its loader/publisher build/emuport.
EMU_DIR := $(BUILD)/emu
EXTRA_BINS += $(BUILD)/emuport

$(EMU_DIR)/emu_port.bpf.o: tests/emu/emu_port.bpf.c tests/emu/emu.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -Itests/emu -c $< -o $@

$(EMU_DIR)/emu_port.skel.h: $(EMU_DIR)/emu_port.bpf.o
	$(BPFTOOL) gen skeleton $< name emu_port > $@.tmp && mv $@.tmp $@

$(BUILD)/emuport: tests/emu/emuport.c tests/emu/emu.h $(EMU_DIR)/emu_port.skel.h
	@mkdir -p $(dir $@)
	$(COMPILE) -I$(EMU_DIR) -Itests/emu $(NS_LDFLAGS) $(LDFLAGS) -o $@ $< $(NS_LDLIBS) $(LDLIBS)

all system: $(BUILD)/emuport
