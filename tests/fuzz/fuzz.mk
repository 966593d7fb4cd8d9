# libFuzzer targets (clang, ASan+UBSan), not part of `all`:
#   make fuzz [FUZZ_TIME=180] [FUZZ_TARGETS="conf rules"]
#        builds $(BUILD)/fuzz/fuzz_NAME and runs each for FUZZ_TIME seconds
#        on a copy of its seed corpus (tests/fuzz/seeds/NAME plus the files
#        tests/fuzz/seeds.sh names); a crash is written to
#        tests/fuzz/crashes/NAME/ and fails the run
#   make fuzz-check   (part of `make check`) every target FUZZ_CHECK_TIME
#        seconds (default 2) and every kept input once
#   build/fuzz/fuzz_NAME -max_total_time=60 DIR    by hand
# A target's own libFuzzer dictionary and options, when it has them:
# tests/fuzz/NAME.dict, tests/fuzz/NAME.flags (run.sh passes both).
# The library is compiled a second time here by clang with coverage and
# sanitizer instrumentation (apart from the gcc build) into
# $(BUILD)/fuzz/libnicstall-fuzz.a; each target is one tests/fuzz/fuzz_*.c.
FUZZ_CC      ?= clang
FUZZ_TIME    ?= 60
FUZZ_CHECK_TIME ?= 2
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-fno-sanitize=function
FUZZ_CFLAGS  := -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link -D_GNU_SOURCE -DNICSTALL_FUZZ \
		-I. -Iinclude -I$(BUILD) -DNICSTALL_VERSION=\"fuzz\" \
		-DNICSTALL_SYSCONFDIR=\"/nonexistent\" -DNICSTALL_DATADIR=\"$(CURDIR)\" \
		$(PKG_CFLAGS) -std=gnu17 -Wall -Werror -Wno-unused-command-line-argument
FUZZ_SRCS    := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES   := $(FUZZ_SRCS:tests/fuzz/fuzz_%.c=%)
FUZZ_BINS    := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)
FUZZ_OBJS    := $(LIB_SRCS:%.c=$(BUILD)/fuzz/obj/%.o)
FUZZ_TARGETS ?= $(FUZZ_NAMES)

.PHONY: fuzz fuzz-build fuzz-check
fuzz-build: $(FUZZ_BINS)

# The gcc build's flag stamp says nothing of these flags (they are all
# here), and only the loaders include a skeleton: their .d files name it
# once built, so the skeletons are needed first but not newer than every
# object.
$(BUILD)/fuzz/obj/%.o: %.c tests/fuzz/fuzz.mk | $(SKELS) $(BUILD)/syscall_names.h
	@mkdir -p $(dir $@)
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/fuzz/libnicstall-fuzz.a: $(FUZZ_OBJS)
	@rm -f $@
	@$(AR) rcs $@ $^
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(BUILD)/fuzz/libnicstall-fuzz.a
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(BUILD)/fuzz/libnicstall-fuzz.a \
		$(NS_LDLIBS) $(LDLIBS)

fuzz: all fuzz-build
	@tests/fuzz/run.sh $(BUILD) long $(FUZZ_TIME) $(FUZZ_TARGETS)

fuzz-check: all fuzz-build
	@tests/fuzz/run.sh $(BUILD) check $(FUZZ_CHECK_TIME) $(FUZZ_TARGETS)
