# Example engine (tests/engine/nsengine.c): a ping-pong load that publishes its
# sessions in a flow table. Needs only include/nicstall/flowtab.h and libc.
EXTRA_BINS += $(BUILD)/nsengine
# `all` was parsed before this fragment: add the engine to it here.
all: $(BUILD)/nsengine

$(BUILD)/nsengine: tests/engine/nsengine.c include/nicstall/flowtab.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ tests/engine/nsengine.c

# `make build/flowtab-check`: the public header compiles as strict C17 and
# C++17 (not part of `all`: needs $(CXX)).
CXX ?= g++
$(BUILD)/flowtab-check: include/nicstall/flowtab.h
	@mkdir -p $(dir $@)
	printf '#include <nicstall/flowtab.h>\nint main(void) { return nsft_now_ns() == 0; }\n' > $@.c
	$(CC) -std=c17 -pedantic -Wall -Wextra -Werror -Iinclude -o $@-c $@.c
	$(CXX) -std=c++17 -pedantic -Wall -Wextra -Werror -Iinclude -x c++ -o $@-cxx $@.c
	touch $@
