# The engines' own statistics headers (tests/fixtures/engines/, C++):
# tests/engine/engine_stats.cc compiled once per variant, each with the
# header's md5sum as STATS_PROTOCOL_VER (as both engines' configure.ac
# compute it). Linked by the emulated engine and the layout test.
CXX ?= g++
ENG_FIX   := tests/fixtures/engines
ENG_VMA   := $(ENG_FIX)/libvma-9.8.84
ENG_XLIO  := $(ENG_FIX)/libxlio-3.70.2
ENG_VMA_HDR  := $(ENG_VMA)/src/vma/util/vma_stats.h
ENG_XLIO_HDR := $(ENG_XLIO)/src/core/util/xlio_stats.h
# the XLIO structs are not standard-layout (ip_addr derives from
# ip_address): GCC's offsetof() on them is what the engine's build uses
ENG_CXX = $(CXX) -D_GNU_SOURCE -I. $(CPPFLAGS) -std=gnu++17 -Wall -Wextra -Werror -MMD -MP \
	  -fno-exceptions -fno-rtti $(SAN_FLAGS) $(CFLAGS)
ENG_MD5 = "\"$$(md5sum < $(1) | cut -c1-32)\""
ENGINE_STATS_OBJS := $(BUILD)/tests/engine/engine_stats_vma.o $(BUILD)/tests/engine/engine_stats_xlio.o \
		     $(BUILD)/tests/engine/engine_stats_xlio_utls.o

$(BUILD)/tests/engine/engine_stats_vma.o: tests/engine/engine_stats.cc $(ENG_VMA_HDR) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(ENG_CXX) -DENG_VMA -DENG_PROTOCOL_VER=$(call ENG_MD5,$(ENG_VMA_HDR)) \
		-I$(ENG_VMA)/src -I$(ENG_VMA)/shim -c -o $@ $<
$(BUILD)/tests/engine/engine_stats_xlio.o: tests/engine/engine_stats.cc $(ENG_XLIO_HDR) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(ENG_CXX) -DENG_XLIO -Wno-invalid-offsetof -DENG_PROTOCOL_VER=$(call ENG_MD5,$(ENG_XLIO_HDR)) \
		-I$(ENG_XLIO)/src -I$(ENG_XLIO)/shim -c -o $@ $<
$(BUILD)/tests/engine/engine_stats_xlio_utls.o: tests/engine/engine_stats.cc $(ENG_XLIO_HDR) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(ENG_CXX) -DENG_XLIO -DDEFINED_UTLS -Wno-invalid-offsetof \
		-DENG_PROTOCOL_VER=$(call ENG_MD5,$(ENG_XLIO_HDR)) \
		-I$(ENG_XLIO)/src -I$(ENG_XLIO)/shim -c -o $@ $<

# Emulated libvma / libxlio process (tests/engine/vmaengine.c): a UDP
# ping-pong that publishes a vmastat.<pid> or xliostat.<pid> file the way
# libvma 9.8.84 and libxlio 3.70.2 do, through their headers.
EXTRA_BINS += $(BUILD)/vmaengine
all: $(BUILD)/vmaengine

$(BUILD)/vmaengine: $(BUILD)/tests/engine/vmaengine.o $(ENGINE_STATS_OBJS)
	@mkdir -p $(dir $@)
	$(LINK) -o $@ $^ $(LDLIBS)

# the layout test compares collectors/flows/vma_parse.c's table with them
$(BUILD)/tests/test_flow_vma_layout: $(ENGINE_STATS_OBJS)
# bench_scale vma writes its statistics files through them, and its
# holders map the libvma stand-in below (dlopen, not linked)
$(BUILD)/bench_scale: $(ENGINE_STATS_OBJS) | $(BUILD)/libvma.so.9.8.84

# A table of many sessions that stall at once (tests/engine/flowstorm.c):
# the storm and authority system tests. Only the public header and libc.
EXTRA_BINS += $(BUILD)/flowstorm
all: $(BUILD)/flowstorm

$(BUILD)/flowstorm: tests/engine/flowstorm.c include/nicstall/flowtab.h
	@mkdir -p $(dir $@)
	$(COMPILE) $(NS_LDFLAGS) $(LDFLAGS) -o $@ tests/engine/flowstorm.c

# An empty libvma.so.9.8.84 the system tests preload into vmaengine: the
# daemon believes a statistics file only from a process mapping a
# root-installed libvma.so* (collectors/flows/claimv.h).
EXTRA_BINS += $(BUILD)/libvma.so.9.8.84
all: $(BUILD)/libvma.so.9.8.84

$(BUILD)/libvma.so.9.8.84: tests/engine/libvma_stub.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -Wall -Wextra -Werror -o $@ $<
# ... and test_flow_src_vma_bounds dlopens it, to be an engine that verifies
$(BUILD)/tests/test_flow_src_vma_bounds: $(BUILD)/libvma.so.9.8.84

# An emulated seed 001 engine (tests/engine/lockengine.c): an echo server
# whose workers share a lock; on SIGUSR1 one send waits for it while a
# sibling keeps it, woken thousands of times to lose again. make demo
# SCENARIO=seed-001 and test_seed001. The public header, libc, pthreads.
EXTRA_BINS += $(BUILD)/lockengine
all: $(BUILD)/lockengine

$(BUILD)/lockengine: tests/engine/lockengine.c include/nicstall/flowtab.h
	@mkdir -p $(dir $@)
	$(COMPILE) -pthread $(NS_LDFLAGS) $(LDFLAGS) -o $@ tests/engine/lockengine.c
