# libFuzzer targets (clang), not part of `all`:
#   make fuzz-build                      builds $(BUILD)/fuzz/fuzz_*
#   mkdir -p /tmp/corpus-vma && build/fuzz/fuzz_flow_vma -max_total_time=60 /tmp/corpus-vma
# Sources are compiled here with clang's fuzzer and ASan instrumentation,
# apart from the gcc library, so each target lists the files it links:
# a module that moves (src_rdma_nl.c) must be listed here too. Issue #12's
# `make fuzz` (short runs in make check) is to take these two targets.
FUZZ_CC     ?= clang
FUZZ_FLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I. -Iinclude \
	       $(PKG_CFLAGS)
FUZZ_VMA    := tests/fuzz/fuzz_flow_vma.c collectors/flow_vma.c collectors/flow_live.c lib/util.c
FUZZ_QP     := tests/fuzz/fuzz_flow_rdmaqp.c collectors/flow_rdmaqp.c collectors/flow_live.c \
	       collectors/src_rdma.c collectors/src_rdma_nl.c collectors/counters.c lib/nl.c lib/util.c lib/log.c lib/netns.c
.PHONY: fuzz-build
fuzz-build: $(BUILD)/fuzz/fuzz_flow_vma $(BUILD)/fuzz/fuzz_flow_rdmaqp
$(BUILD)/fuzz/fuzz_flow_vma: $(FUZZ_VMA) collectors/flow_vma.h collectors/flow_live.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_VMA)
$(BUILD)/fuzz/fuzz_flow_rdmaqp: $(FUZZ_QP) collectors/flow_rdmaqp.h collectors/src_rdma.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_QP) $(PKG_LIBS)
