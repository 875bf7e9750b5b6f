# Included by every Makefile that compiles a program a result names by its SHA-256 (memcached-ac,
# ycsb-trace, libacopt.so: harness/acbench/cellkey.py). Paths in debug information and __FILE__ are
# written relative to the checkout, so that the same source gives the same binaries whatever the
# checkout's path: a grid resumed from another clone of the same revision keeps its cells.
REPRO_FLAGS := -ffile-prefix-map=$(TOP)=.
