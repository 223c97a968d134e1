#!/bin/sh
# One BPF program compiled as src/lib.rs compiles it (its flags and this
# crate's include/), for the scripts that build a revision's programs
# outside cargo (objdiff.sh, bench/fastpath/cost.sh --base). Keep the
# flags in step with src/lib.rs.
#
# usage: crates/bpf-build/cc.sh TREE CRATE NAME OUT
#   TREE: a checkout's root (its crates/bpf-build/include is used)
#   compiles TREE/crates/CRATE/bpf/NAME.bpf.c to OUT
set -eu
tree=$1 crate=$2 name=$3 out=$4
cd "$tree/crates/$crate"
exec clang -O2 -g -target bpf -mcpu=v3 -Wall -Werror \
	"-I/usr/include/$(uname -m)-linux-gnu" "-I$tree/crates/bpf-build/include" \
	-c "bpf/$name.bpf.c" -o "$out"
