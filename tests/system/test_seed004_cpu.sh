#!/bin/bash
# Seed 004's CPU part on its own (test_seed004.sh, part 3): rank2's
# producer starved of CPU by a cgroup v1 quota, every rank's bundle naming
# it and the three others as waiting on it. Its verdicts judge which ranks
# the host starved of CPU, so make check runs it with no other test beside
# it (NICSTALL_QUIET in tests/system/run.sh); the other parts do not need
# that and stay in test_seed004.sh.
SEED004_PARTS=cpu exec bash "$(dirname "$0")/test_seed004.sh" "$@"
