# Example engine (examples/nsengine.c): a ping-pong load that publishes its
# sessions in a flow table. Needs only include/nicstall/flowtab.h and libc.
EXTRA_BINS += $(BUILD)/nsengine
all: $(BUILD)/nsengine

$(BUILD)/nsengine: examples/nsengine.c examples/nsengine_io.c examples/nsengine.h examples/nsengine_lathist.h \
		   include/nicstall/flowtab.h
	@mkdir -p $(dir $@)
	$(COMPILE) $(NS_LDFLAGS) $(LDFLAGS) -pthread -o $@ examples/nsengine.c examples/nsengine_io.c

# `make build/flowtab-check`: the public header compiles as strict C17 and
# C++17 (not part of `all`: needs $(CXX)).
CXX ?= g++
$(BUILD)/flowtab-check: include/nicstall/flowtab.h
	@mkdir -p $(dir $@)
	printf '#include <nicstall/flowtab.h>\nint main(void) { return nsft_now_ns() == 0; }\n' > $@.c
	$(CC) -std=c17 -pedantic -Wall -Wextra -Werror -Iinclude -o $@-c $@.c
	$(CXX) -std=c++17 -pedantic -Wall -Wextra -Werror -Iinclude -x c++ -o $@-cxx $@.c
	touch $@
