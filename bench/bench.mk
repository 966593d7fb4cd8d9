# make bench: benchmarks (bench/run.sh builds these and runs them; see
# bench/README.md). Not part of `make all` or `make check`.
BENCH_PROGS := bench_sweep bench_scale bench_conns
BENCH_BINS += $(BENCH_PROGS:%=$(BUILD)/%)
$(BUILD)/bench_%: $(BUILD)/bench/bench_%.o $(BUILD)/libnicstall.a
	$(LINK) -o $@ $^ $(NS_LDLIBS) $(LDLIBS)
.PHONY: bench-bins
bench-bins: $(BENCH_BINS) $(BUILD)/nsengine
