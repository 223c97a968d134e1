#!/bin/sh
# The BPF programs' machine code at a revision against the working tree:
# compiles every bpf/*.bpf.c of the crates that have programs (with the
# flags and include path of src/lib.rs) from both, and compares
# `llvm-objdump -d -r` of each object. For changes meant to leave the
# programs' behaviour alone (names for literals, shared headers): they
# should print "same" for every program.
#
# usage: crates/bpf-build/objdiff.sh [REV]     (REV: main by default)
set -eu
rev=${1:-main}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
crates="fastpath tester dut"

# The sources at REV: the crates' bpf/ and bpf-build's include/ (if any).
mkdir -p "$tmp/old" "$tmp/new"
git -C "$root" archive "$rev" $(git -C "$root" ls-tree -r --name-only "$rev" -- crates |
	grep -E "^crates/(fastpath|tester|dut)/bpf/|^crates/bpf-build/include/") |
	tar -x -C "$tmp/old"
ln -s "$root/crates" "$tmp/new/crates"

build() { # tree out
	for c in $crates; do
		for src in "$1/crates/$c/bpf/"*.bpf.c; do
			name=$(basename "$src" .bpf.c)
			"$root/crates/bpf-build/cc.sh" "$1" "$c" "$name" "$2.$c.$name.o"
			llvm-objdump -d -r "$2.$c.$name.o" | tail -n +3 >"$2.$c.$name.dis"
		done
	done
}
build "$tmp/old" "$tmp/old/obj"
build "$tmp/new" "$tmp/new/obj"

status=0
for dis in "$tmp"/new/obj.*.dis; do
	prog=$(basename "$dis" .dis | sed 's/^obj\.//')
	old="$tmp/old/obj.$prog.dis"
	if [ ! -e "$old" ]; then
		echo "$prog: new program"
	elif cmp -s "$old" "$dis"; then
		echo "$prog: same ($(grep -c '^ *[0-9a-f]*:' "$dis") instructions)"
	else
		echo "$prog: DIFFERENT"
		diff -u "$old" "$dis" | head -40
		status=1
	fi
done
exit $status
