# make bench: benchmarks (bench/run.sh runs them)
$(BUILD)/bench_sample: $(BUILD)/bench/bench_sample.o $(BUILD)/libnicstall.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
BENCH_BINS += $(BUILD)/bench_sample
