#!/bin/bash
echo "make bench: no benchmarks yet"
