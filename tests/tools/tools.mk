# Test tools built from C (the others in tests/tools are scripts).
# build/tcxq: the programs on an interface's tcx hooks (tcxq.c).
# build/killon: SIGKILL a process while it opens a path that holds a
# given string, on a mount it watches (fanotify; killon.c).
EXTRA_BINS += $(BUILD)/tcxq $(BUILD)/killon
$(BUILD)/tcxq: $(BUILD)/tests/tools/tcxq.o
	$(LINK) -o $@ $< $(NS_LDLIBS) $(LDLIBS)
$(BUILD)/killon: $(BUILD)/tests/tools/killon.o
	$(LINK) -o $@ $<

all system: $(BUILD)/tcxq $(BUILD)/killon
