"""Per window length: the kernel's 64 B NDR and PDR of every round, and
the largest deviation from their median (ab.sh's files)."""
import glob, json, statistics, sys
out = {}
for f in sorted(glob.glob("w*-*.json")):
    w, i = f[1:-5].rsplit("-", 1)
    d = json.load(open(f))
    g = d["runs"][0]["tests"][0]["result"]["goals"]
    out.setdefault(w, []).append((int(i), [x.get("fps") or 0 for x in g]))
for w in sorted(out, key=float, reverse=True):
    rows = sorted(out[w])
    for k, name in enumerate(["NDR", "PDR"]):
        v = [r[1][k] for r in rows]
        med = statistics.median(v)
        dev = max(abs(x - med) for x in v) / med * 100
        sd = statistics.pstdev(v) / statistics.mean(v) * 100
        print(f"window {w:5s} s {name}: " + " ".join(f"{x/1e6:.3f}" for x in v)
              + f"  median {med/1e6:.3f}  max dev {dev:.1f} %  sd/mean {sd:.1f} %")

# Each run's NDR beside the kernel's cycles a packet in its trials at
# 0.6-0.85 Mpps (median): does the NDR follow the DUT's own cost?
pts = []
for f in sorted(glob.glob("w*-*.json")):
    t = json.load(open(f))["runs"][0]["tests"][0]
    ndr = t["result"]["goals"][0].get("fps") or 0
    cpp = sorted(c["dut_cycles_per_packet"] for c in
                 (((tr["outcome"].get("dut_stats") or {}).get("cpu") or {}) for tr in t["trials"]
                  if 0.6e6 < tr["outcome"]["offered_rate_fps"] < 0.85e6)
                 if c.get("dut_cycles_per_packet"))
    if cpp:
        pts.append((ndr, cpp[len(cpp) // 2]))
if len(pts) > 2:
    a, b = [p[0] for p in pts], [p[1] for p in pts]
    ma, mb = statistics.mean(a), statistics.mean(b)
    r = sum((x - ma) * (y - mb) for x, y in pts) / (
        sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** 0.5
    print(f"{len(pts)} runs: NDR against the kernel's median cycles a packet at 0.6-0.85 Mpps "
          f"({min(b):.0f}-{max(b):.0f}): correlation {r:.2f}")
