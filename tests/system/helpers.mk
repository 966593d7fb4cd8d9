# Unit-test binaries the system tests also run as tools: the crafted
# devlink health replies (test_devlink_health --write-set) and RDMA QP
# dumps (test_flow_readers --write-qp). Built by `make system`.
EXTRA_BINS += $(BUILD)/tests/test_devlink_health $(BUILD)/tests/test_flow_readers
# Every binary a system test runs, for a build directory of its own
# (system-asan builds them in build-asan, where no unit run may have).
.PHONY: system-bins
system-bins: $(EXTRA_BINS)
