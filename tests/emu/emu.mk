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
	$(CC) $(CPPFLAGS) -I$(EMU_DIR) -Itests/emu $(CFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

# `all` and `system` are defined before this fragment is read, so their
# $(EXTRA_BINS) prerequisites were expanded empty: add ours explicitly.
all system: $(BUILD)/emuport
