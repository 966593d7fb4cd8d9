# make bench: benchmarks (bench/run.sh runs them)
$(BUILD)/bench_sample: $(BUILD)/bench/bench_sample.o $(BUILD)/libnicstall.a
	$(LINK) -o $@ $^ $(NS_LDLIBS) $(LDLIBS)
BENCH_BINS += $(BUILD)/bench_sample
$(BUILD)/bench_metrics: $(BUILD)/bench/bench_metrics.o $(BUILD)/libnicstall.a
	$(LINK) -o $@ $^ $(NS_LDLIBS) $(LDLIBS)
BENCH_BINS += $(BUILD)/bench_metrics
