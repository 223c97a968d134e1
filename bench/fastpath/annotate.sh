#!/usr/bin/env bash
# Where a loaded XDP program spends its time on the live wire, instruction
# by instruction: dumps the program's JIT image (jitdump.py), records
# `perf record -C CPU` for SECONDS while traffic flows, and prints the
# image's disassembly with each instruction's share of the program's
# samples, hottest first, then whole (OUT/annotated.txt).
#
# usage: bench/fastpath/annotate.sh [--prog sr_fwd] [--cpu 0] [--seconds 8] [--out DIR]
# Start the traffic first (e.g. `softrouter bench --dut softrouter --test
# loss --sizes 64 --max-rate-fps 2000000 --trial-seconds 20`) and run this
# once its first trial has begun. Root. The samples are cpu-clock (this
# VM has no PMU): a stall shows on the instruction after the one waiting.
# Used in the twenty-first session (bench/floor/HISTORY.md) to find the
# TTL word read back after its store.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
prog=sr_fwd cpu=0 seconds=8 out=
while [ $# -gt 0 ]; do
    case "$1" in
        --prog) prog="$2"; shift 2 ;;
        --cpu) cpu="$2"; shift 2 ;;
        --seconds) seconds="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        *) echo "annotate.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
out=${out:-$(mktemp -d)}
mkdir -p "$out"
# The first loaded program of that name: its id and tag.
show=$(bpftool prog show name "$prog" 2>/dev/null | head -1 || true)
id=$(sed -n 's/^\([0-9]*\):.*/\1/p' <<<"$show")
tag=$(sed -n 's/.* tag \([0-9a-f]*\).*/\1/p' <<<"$show")
[ -n "$id" ] && [ -n "$tag" ] || { echo "annotate.sh: no loaded program named $prog" >&2; exit 1; }
python3 "$here/jitdump.py" "$id" "$out/jit.bin" >/dev/null
# The image's address: its kallsyms symbol, bpf_prog_<tag>_<name>.
base=$(awk -v s="bpf_prog_${tag}_$prog" '$3 == s { print $1; exit }' /proc/kallsyms)
[ -n "$base" ] || { echo "annotate.sh: bpf_prog_${tag}_$prog not in /proc/kallsyms" >&2; exit 1; }
objdump -D -b binary -mi386:x86-64 "$out/jit.bin" > "$out/jit.asm"
perf record -q -C "$cpu" -F 10000 -o "$out/perf.data" -- sleep "$seconds" 2>/dev/null
# By address, not by name: perf may name the image after another tag.
perf script -i "$out/perf.data" -F ip 2>/dev/null > "$out/ips.txt"
python3 - "$base" "$out" <<'PY'
import collections, os, re, sys
base, out = int(sys.argv[1], 16), sys.argv[2]
size = os.path.getsize(f"{out}/jit.bin")
offs = (int(l, 16) - base for l in open(f"{out}/ips.txt") if l.strip())
hits = collections.Counter(o for o in offs if 0 <= o < size)
total = sum(hits.values()) or 1
rows = []
for line in open(f"{out}/jit.asm"):
    m = re.match(r"\s+([0-9a-f]+):", line)
    if m:
        n = hits.get(int(m.group(1), 16), 0)
        rows.append((n, f"{100 * n / total:5.1f} {line.rstrip()}" if n else f"      {line.rstrip()}"))
open(f"{out}/annotated.txt", "w").write("\n".join(r for _, r in rows) + "\n")
print(f"{total} samples in the program; hottest instructions (% of them):")
for n, r in sorted(rows, key=lambda x: -x[0])[:15]:
    if n:
        print(r)
print(f"whole listing: {out}/annotated.txt")
PY
