# make bench: benchmarks (bench/run.sh builds these and runs them; see
# bench/README.md). Not part of `make all`; `make check` only builds them
# for the smoke test.
BENCH_PROGS := bench_sweep bench_scale bench_conns bench_metrics bench_threads bench_runs bench_app bench_window bench_tpfloor
BENCH_BINS += $(BENCH_PROGS:%=$(BUILD)/%)
$(BUILD)/bench_%: $(BUILD)/bench/bench_%.o $(BUILD)/libnicstall.a
	$(LINK) -o $@ $^ $(NS_LDLIBS) $(LDLIBS)
# its BPF program (the generic .bpf.o and skeleton rules build it)
$(BUILD)/bench/bench_tpfloor.o: $(BUILD)/bench/tpfloor.skel.h
# The system test test_bench_smoke runs them with tiny counts.
EXTRA_BINS += $(BENCH_BINS)
.PHONY: bench-bins
bench-bins: $(BENCH_BINS) $(BUILD)/nsengine
