# Test tools built from C (the others in tests/tools are scripts).
# build/tcxq: the programs on an interface's tcx hooks (tcxq.c).
EXTRA_BINS += $(BUILD)/tcxq
$(BUILD)/tcxq: $(BUILD)/tests/tools/tcxq.o
	$(LINK) -o $@ $< $(NS_LDLIBS) $(LDLIBS)

all system: $(BUILD)/tcxq
