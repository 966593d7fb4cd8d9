#!/bin/bash
# make demo: the whole job on an emulated port pair. The emulator and the
# stall detection it demonstrates are still being built (see README Status).
echo "make demo: not yet available: the emulated port pair and the forensic"
echo "sequence are in progress (see README.md, Status). 'make check' is real."
exit 0
