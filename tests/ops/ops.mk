# Test tools for the operations tests (tests/system/test_notify.sh...):
# notifyrecv stands in for systemd's NOTIFY_SOCKET.
EXTRA_BINS += $(BUILD)/notifyrecv
all: $(BUILD)/notifyrecv

$(BUILD)/notifyrecv: tests/ops/notifyrecv.c
	@mkdir -p $(dir $@)
	$(COMPILE) $(NS_LDFLAGS) $(LDFLAGS) -o $@ $<
