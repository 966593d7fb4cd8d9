# Emulated libvma process (tests/engine/vmaengine.c): a UDP ping-pong that
# publishes a vmastat.<pid> file the way libvma 9.8.84 does. Links the
# project library for the layout table only.
EXTRA_BINS += $(BUILD)/vmaengine
all: $(BUILD)/vmaengine

$(BUILD)/vmaengine: $(BUILD)/tests/engine/vmaengine.o $(BUILD)/libnicstall.a
	@mkdir -p $(dir $@)
	$(LINK) -o $@ $^ $(NS_LDLIBS) $(LDLIBS)

# A table of many sessions that stall at once (tests/engine/flowstorm.c):
# the storm and authority system tests. Only the public header and libc.
EXTRA_BINS += $(BUILD)/flowstorm
all: $(BUILD)/flowstorm

$(BUILD)/flowstorm: tests/engine/flowstorm.c include/nicstall/flowtab.h
	@mkdir -p $(dir $@)
	$(COMPILE) $(NS_LDFLAGS) $(LDFLAGS) -o $@ tests/engine/flowstorm.c

# An empty libvma.so.9.8.84 the system tests preload into vmaengine: the
# daemon believes a statistics file only from a process mapping a
# root-installed libvma.so* (collectors/claimv.h).
EXTRA_BINS += $(BUILD)/libvma.so.9.8.84
all: $(BUILD)/libvma.so.9.8.84

$(BUILD)/libvma.so.9.8.84: tests/engine/libvma_stub.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -Wall -Wextra -Werror -o $@ $<
# ... and test_flow_src_vma_bounds dlopens it, to be an engine that verifies
$(BUILD)/tests/test_flow_src_vma_bounds: $(BUILD)/libvma.so.9.8.84
