#!/usr/bin/env python3
"""Measurement half of compare.sh: alternate l3fwd and softrouter rounds,
print a table of medians and write every round to a JSON file.
Called by compare.sh (which installs, builds and generates the input)."""
import argparse
import datetime
import glob
import json
import os
import signal
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep bench/l3fwd free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from telemetry import query  # noqa: E402

LIVE = []  # processes to kill on any exit path


def kill_all(*_):
    for p in LIVE:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    LIVE.clear()


def on_signal(sig, _frame):
    kill_all()
    sys.exit(128 + sig)


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def cpu_ns(pid, tid=None):
    """On-CPU nanoseconds (schedstat) of one thread, or summed over all."""
    tids = [tid] if tid else [os.path.basename(t) for t in glob.glob(f"/proc/{pid}/task/*")]
    total = 0
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def stop(p, sig=signal.SIGINT, grace=5.0):
    if p.poll() is None:
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    if p in LIVE:
        LIVE.remove(p)


def wait_for_line(p, logf, text, what, timeout):
    """Waits until `text` appears in the log `logf` of process `p`: the
    program is forwarding (a full table takes seconds to load)."""
    deadline = time.time() + timeout
    tail = ""
    with open(logf, errors="replace") as f:  # read as it grows (l3fwd logs every route)
        while True:
            tail = tail[-len(text):] + f.read()
            if text in tail:
                return
            if p.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"{what} did not start forwarding, see {logf}")
            time.sleep(0.2)


def run_l3fwd(a, rnd, huge=True):
    """One l3fwd round: on 2 MB huge pages from `a.huge_dir` (as DPDK is
    deployed; --huge-unlink leaves no files behind), or with --no-huge (the
    extra row: mbufs on 4 KiB pages)."""
    name = "l3fwd" if huge else "l3fwd-nohuge"
    prefix = f"l3fwdcmp{os.getpid()}r{rnd}{'h' if huge else 'n'}"
    mem = (["-m", "512", "--huge-dir", a.huge_dir, "--huge-unlink"] if huge
           else ["--no-huge", "-m", "512"])
    cmd = [a.l3fwd, "-l", str(a.core), "-n", "1", *mem,
           "--file-prefix", prefix, "--no-pci",
           "--vdev", f"net_pcap0,rx_pcap={a.pcap},infinite_rx=1",
           "--vdev", "net_null1",
           "--", "-p", "0x3", "-P", "--lookup", "lpm", "--parse-ptype",
           f"--config=(0,0,{a.core})"]
    if a.rule_ipv4:
        cmd += [f"--rule_ipv4={a.rule_ipv4}", f"--rule_ipv6={a.rule_ipv6}"]
    logf = os.path.join(a.work, f"{name}-r{rnd}.log")
    sock = f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2"
    la0 = loadavg()
    with open(logf, "w") as lf:
        p = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT,
                             start_new_session=True)
    LIVE.append(p)
    try:
        deadline = time.time() + 30
        while not os.path.exists(sock):
            if p.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"l3fwd did not start, see {logf}")
            time.sleep(0.1)
        wait_for_line(p, logf, "entering main loop", "l3fwd", 300)
        time.sleep(a.warmup)

        def snap():
            t = time.monotonic()
            s0 = query(sock, "/ethdev/stats,0")["/ethdev/stats"]
            s1 = query(sock, "/ethdev/stats,1")["/ethdev/stats"]
            return t, s0, s1, cpu_ns(p.pid, p.pid)

        t0, a0, b0, c0 = snap()
        time.sleep(a.seconds)
        t1, a1, b1, c1 = snap()
        if p.poll() is not None:
            raise RuntimeError(f"l3fwd exited during the run, see {logf}")
    finally:
        stop(p)
        subprocess.run(["rm", "-rf", f"/var/run/dpdk/{prefix}"], check=False)
    dt = t1 - t0
    rx = a1["ipackets"] - a0["ipackets"]
    tx = b1["opackets"] - b0["opackets"]
    back = a1["opackets"] - a0["opackets"]  # LPM misses would go back out port 0
    cpu_s = (c1 - c0) / 1e9
    return {
        "impl": name, "round": rnd, "interval_s": dt,
        "rx_packets": rx, "tx_packets": tx, "tx_port0_packets": back,
        "rx_missed": (a1["imissed"] - a0["imissed"]) + (a1["rx_nombuf"] - a0["rx_nombuf"]),
        "mpps": tx / dt / 1e6,
        "cycles_per_packet_wall": a.tsc_hz * dt / max(tx, 1),
        "cycles_per_packet_cpu": a.tsc_hz * cpu_s / max(tx, 1),
        "lcore_cpu_share": cpu_s / dt,
        "loadavg_before": la0, "loadavg_after": loadavg(),
        "cmd": cmd,
    }


SR_CONFIG = """\
# generated by bench/l3fwd/run_compare.py: mirrors l3fwd's LPM table for
# ports 0 and 1 (198.18.0.0/24 -> port 0, 198.18.1.0/24 -> port 1), and
# with --sr-routes l3fwd's rule file (every route via p1's neighbour).
[router]
workers = {workers}
mode = "poll"
cores = {cores}

[[port]]
name = "p0"
driver = "mem"
rx_pcap = "{pcap}"
mac = "02:00:00:00:00:10"
addresses = ["198.18.255.1/24"]

[[port]]
name = "p1"
driver = "mem"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/24"]

[[route]]
prefix = "198.18.0.0/24"
via = ["198.18.255.2"]

[[route]]
prefix = "198.18.1.0/24"
via = ["198.19.0.2"]

[[neighbor]]
address = "198.18.255.2"
mac = "02:00:00:00:00:21"
port = "p0"

[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "p1"
{routes_file}"""


def sr_counters(j):
    tx = sum(p["tx_packets"] for p in j["ports"])
    rx = sum(p["rx_packets"] for p in j["ports"])
    cyc = (j.get("totals") or {}).get("cycles")
    return j["elapsed_s"], rx, tx, cyc


def run_softrouter(a, rnd, workers=1):
    """One softrouter round: `workers` workers, the first on `a.core`, a
    second (scaling mode) on the other core of a two-core machine."""
    cores = [a.core] + [c for c in range(os.cpu_count()) if c != a.core][:workers - 1]
    cfg = os.path.join(a.work, f"softrouter-{workers}w.toml")
    routes = f'\n[routes_file]\npath = "{a.sr_routes}"\n' if a.sr_routes else ""
    with open(cfg, "w") as f:
        f.write(SR_CONFIG.format(core=a.core, pcap=a.pcap, workers=workers,
                                 cores=cores, routes_file=routes))
    name = "softrouter" if workers == 1 else f"softrouter-{workers}w"
    stats = os.path.join(a.work, f"{name}-r{rnd}.json")
    logf = os.path.join(a.work, f"{name}-r{rnd}.log")
    for x in (stats,):
        if os.path.exists(x):
            os.unlink(x)
    # Run long enough for loading the table + warmup + window (stopped
    # after the window); snapshots by SIGUSR1 bracket the window like
    # l3fwd's telemetry reads; the exit file is the fallback.
    duration = 300 + a.warmup + a.seconds
    cmd = [a.softrouter, "run", "--config", cfg, "--duration", str(duration),
           "--stats-json", stats]
    la0 = loadavg()
    with open(logf, "w") as lf:
        p = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT,
                             start_new_session=True)
    LIVE.append(p)

    def snap():
        if os.path.exists(stats):
            os.unlink(stats)
        t = time.monotonic()
        c = cpu_ns(p.pid)
        p.send_signal(signal.SIGUSR1)
        end = time.time() + 2
        while not os.path.exists(stats) and time.time() < end and p.poll() is None:
            time.sleep(0.01)
        try:
            with open(stats) as f:
                return t, json.load(f), c
        except (OSError, ValueError):
            return t, None, c

    try:
        # SIGUSR1 before the handler is installed would kill it: wait for
        # the engine's start line.
        wait_for_line(p, logf, "forwarding on", "softrouter", 300)
        time.sleep(a.warmup)
        if p.poll() is not None:
            raise RuntimeError(f"softrouter exited early (rc {p.returncode}), see {logf}")
        t0, j0, c0 = snap()
        time.sleep(max(0.0, a.seconds - (time.monotonic() - t0)))
        t1, j1, c1 = snap()
        stop(p, signal.SIGTERM, grace=30)
    finally:
        stop(p, signal.SIGTERM)
    final = None
    try:
        with open(stats) as f:
            final = json.load(f)
    except (OSError, ValueError):
        pass
    if j0 is not None and j1 is not None:
        window = "sigusr1"
        e0, r0, x0, k0 = sr_counters(j0)
        e1, r1, x1, k1 = sr_counters(j1)
        dt, rx, tx = e1 - e0, r1 - r0, x1 - x0
        cpu_s = (c1 - c0) / 1e9
        if k0 and k1 and all(k in k1 for k in ("rx", "process", "tx", "packets")):
            n = max(k1["packets"] - k0["packets"], 1)
            split = {s: (k1[s] - k0[s]) / n for s in ("rx", "process", "tx")}
        else:
            split = {s: j1["cycles_per_packet"][s] for s in ("rx", "process", "tx")}
        last = j1
    elif final is not None:
        window = "whole-run"  # includes startup and warmup
        dt, rx, tx, _ = sr_counters(final)
        cpu_s = None
        split = {s: final["cycles_per_packet"][s] for s in ("rx", "process", "tx")}
        last = final
    else:
        raise RuntimeError(f"softrouter wrote no stats, see {logf}")
    return {
        "impl": name, "workers": workers, "cores": cores,
        "round": rnd, "window": window, "interval_s": dt,
        "rx_packets": rx, "tx_packets": tx,
        "mpps": tx / dt / 1e6,
        "cycles_per_packet_wall": a.tsc_hz * dt / max(tx, 1),
        "cycles_per_packet_cpu": (a.tsc_hz * cpu_s / max(tx, 1)) if cpu_s else None,
        "process_cpu_share": (cpu_s / dt) if cpu_s else None,
        "cycles_per_packet_stages": dict(split, total=sum(split.values())),
        "drops": last.get("drops"), "notes": last.get("notes"),
        "memory": last.get("memory"),
        "final_exit_stats": {k: final[k] for k in ("elapsed_s", "ports", "drops", "cycles_per_packet")} if final else None,
        "loadavg_before": la0, "loadavg_after": loadavg(),
        "cmd": cmd,
    }


def med(rows, key, sub=None):
    v = [(r[key][sub] if sub else r[key]) for r in rows]
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def fmt(x, f="{:.2f}"):
    return "-" if x is None else f.format(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--l3fwd", required=True)
    ap.add_argument("--softrouter", default="")
    ap.add_argument("--softrouter-note", default="")
    ap.add_argument("--pcap", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tsc-hz", type=float, required=True)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--core", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--huge-dir", required=True)
    ap.add_argument("--huge-note", default="")
    ap.add_argument("--nohuge-row", type=int, default=1)
    ap.add_argument("--rule-ipv4", default="", help="l3fwd --rule_ipv4 file (full table)")
    ap.add_argument("--rule-ipv6", default="", help="l3fwd --rule_ipv6 file")
    ap.add_argument("--sr-routes", default="", help="softrouter [routes_file] (full table)")
    ap.add_argument("--table", default="small", help="label: small (2 routes) or full")
    ap.add_argument("--scaling", type=int, default=0,
                    help="softrouter with 1 and 2 workers instead of l3fwd")
    a = ap.parse_args()
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)

    rows, errors = [], []
    la_start = loadavg()
    for rnd in range(a.rounds):
        impls = []
        if a.scaling:
            impls.append(("softrouter", run_softrouter))
            impls.append(("softrouter-2w", lambda a, rnd: run_softrouter(a, rnd, workers=2)))
        else:
            impls.append(("l3fwd", run_l3fwd))
            if a.nohuge_row:
                impls.append(("l3fwd-nohuge", lambda a, rnd: run_l3fwd(a, rnd, huge=False)))
            if a.softrouter:
                impls.append(("softrouter", run_softrouter))
        for name, fn in impls:
            try:
                r = fn(a, rnd)
                rows.append(r)
                extra = ""
                if name.startswith("softrouter"):
                    extra = " stages %s window=%s" % (
                        "/".join(fmt(r["cycles_per_packet_stages"][s], "{:.0f}") for s in ("rx", "process", "tx")),
                        r["window"])
                print(f"round {rnd} {name:10s} {r['mpps']:7.3f} Mpps  "
                      f"{r['cycles_per_packet_wall']:6.1f} cyc/pkt (wall)  "
                      f"{fmt(r['cycles_per_packet_cpu'], '{:.1f}')} cyc/pkt (cpu)  "
                      f"load {r['loadavg_before'][0]:.2f}{extra}", file=sys.stderr, flush=True)
            except Exception as e:  # keep the other half going
                errors.append({"impl": name, "round": rnd, "error": str(e)})
                print(f"round {rnd} {name}: ERROR {e}", file=sys.stderr, flush=True)
    kill_all()

    L = [r for r in rows if r["impl"] == "l3fwd"]
    N = [r for r in rows if r["impl"] == "l3fwd-nohuge"]
    S = [r for r in rows if r["impl"] == "softrouter"]
    S2 = [r for r in rows if r["impl"] == "softrouter-2w"]
    summary = {"table": a.table}
    for key, R in (("l3fwd", L), ("l3fwd_nohuge", N)):
        if R:
            summary[key] = {"mpps": med(R, "mpps"),
                            "cycles_per_packet_wall": med(R, "cycles_per_packet_wall"),
                            "cycles_per_packet_cpu": med(R, "cycles_per_packet_cpu"),
                            "lcore_cpu_share": med(R, "lcore_cpu_share")}
    if S:
        summary["softrouter"] = {"mpps": med(S, "mpps"),
                                 "cycles_per_packet_wall": med(S, "cycles_per_packet_wall"),
                                 "cycles_per_packet_cpu": med(S, "cycles_per_packet_cpu"),
                                 "stages": {k: med(S, "cycles_per_packet_stages", k)
                                            for k in ("rx", "process", "tx", "total")},
                                 "memory": S[-1].get("memory")}
    if S and S2:
        summary["softrouter_2_workers"] = {"mpps": med(S2, "mpps"),
                                           "stages": {k: med(S2, "cycles_per_packet_stages", k)
                                                      for k in ("rx", "process", "tx", "total")}}
        summary["ratio_2_workers_over_1_mpps"] = summary["softrouter_2_workers"]["mpps"] / summary["softrouter"]["mpps"]
    if L and S:
        summary["ratio_l3fwd_over_softrouter_mpps"] = summary["l3fwd"]["mpps"] / summary["softrouter"]["mpps"]
        summary["ratio_softrouter_over_l3fwd_mpps"] = summary["softrouter"]["mpps"] / summary["l3fwd"]["mpps"]
        summary["ratio_softrouter_over_l3fwd_cycles_wall"] = (
            summary["softrouter"]["cycles_per_packet_wall"] / summary["l3fwd"]["cycles_per_packet_wall"])

    def sh(*c):
        try:
            return subprocess.run(c, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return None

    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "tsc_hz": a.tsc_hz, "seconds": a.seconds, "warmup": a.warmup,
        "table": a.table, "scaling": bool(a.scaling),
        "rule_ipv4": a.rule_ipv4 or None, "softrouter_routes": a.sr_routes or None,
        "rounds": a.rounds, "core": a.core, "pcap": a.pcap,
        "frame_bytes_on_wire": 64,
        "nproc": os.cpu_count(),
        "cpu_model": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                           if l.startswith("model name")), None),
        "dpdk_version": sh("pkg-config", "--modversion", "libdpdk"),
        "softrouter_bin": a.softrouter or None,
        "softrouter_note": a.softrouter_note or None,
        "git_head": sh("git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "HEAD"),
        "loadavg_start": la_start, "loadavg_end": loadavg(),
        "l3fwd_huge_pages": a.huge_note or None, "huge_dir": a.huge_dir,
        "uptime": sh("uptime"),
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"meta": meta, "summary": summary, "rounds": rows, "errors": errors}, f, indent=2)

    print()
    print(f"table: {a.table}; medians over {a.rounds} alternating rounds, {a.seconds:g} s windows after {a.warmup:g} s warmup; "
          f"TSC {a.tsc_hz / 1e9:.3f} GHz; load avg {la_start[0]:.2f} -> {meta['loadavg_end'][0]:.2f} on {os.cpu_count()} cores")
    print(f"{'':12s} {'Mpps':>8s} {'cyc/pkt wall':>13s} {'cyc/pkt cpu':>12s} {'rx':>6s} {'process':>8s} {'tx':>6s}")
    for key, label in (("l3fwd", "l3fwd huge"), ("l3fwd_nohuge", "l3fwd nohuge")):
        if a.scaling:
            break
        if key in summary:
            l = summary[key]
            print(f"{label:12s} {l['mpps']:8.3f} {l['cycles_per_packet_wall']:13.1f} "
                  f"{fmt(l['cycles_per_packet_cpu'], '{:.1f}'):>12s} {'-':>6s} {'-':>8s} {'-':>6s}")
        elif key == "l3fwd" or a.nohuge_row:
            print(f"{label:12s} (no successful round)")
    if S:
        s = summary["softrouter"]
        st = s["stages"]
        print(f"{'softrouter':12s} {s['mpps']:8.3f} {s['cycles_per_packet_wall']:13.1f} "
              f"{fmt(s['cycles_per_packet_cpu'], '{:.1f}'):>12s} {fmt(st['rx'], '{:.1f}'):>6s} "
              f"{fmt(st['process'], '{:.1f}'):>8s} {fmt(st['tx'], '{:.1f}'):>6s}")
    else:
        print("softrouter   (not measured: " + ((a.softrouter_note or "no binary") if not a.softrouter else "no successful round") + ")")
    if S and summary["softrouter"]["memory"]:
        print("softrouter memory (bytes on huge pages: explicit 2 MB + THP / region size):")
        for m in summary["softrouter"]["memory"]:
            print(f"  {m['region']:18s} {m['huge_explicit_bytes'] + m['huge_thp_bytes']:>12d} / {m['bytes']:>12d}"
                  f"  (explicit {m['huge_explicit_bytes']}, THP {m['huge_thp_bytes']})")
    elif S:
        print("softrouter memory: (its stats file has no 'memory' section)")
    if S2:
        s2 = summary.get("softrouter_2_workers")
        if s2:
            st = s2["stages"]
            print(f"{'softrouter 2w':12s} {s2['mpps']:8.3f} {'-':>13s} {'-':>12s} {fmt(st['rx'], '{:.1f}'):>6s} "
                  f"{fmt(st['process'], '{:.1f}'):>8s} {fmt(st['tx'], '{:.1f}'):>6s}")
            print(f"scaling: 2 workers / 1 worker Mpps = {summary['ratio_2_workers_over_1_mpps']:.2f} (target >= 1.9)")
    if a.scaling:
        print(f"all rounds: {a.out}")
        return 0 if S and S2 else 1
    print(f"l3fwd huge pages: {a.huge_note} ({a.huge_dir}); the 'nohuge' row is --no-huge -m 512")
    if L and S:
        print(f"ratio: softrouter/l3fwd(huge) Mpps = {summary['ratio_softrouter_over_l3fwd_mpps']:.2f}; "
              f"l3fwd/softrouter Mpps = {summary['ratio_l3fwd_over_softrouter_mpps']:.2f}, "
              f"softrouter/l3fwd cycles (wall) = {summary['ratio_softrouter_over_l3fwd_cycles_wall']:.2f}")
    print(f"all rounds: {a.out}")
    if errors:
        print(f"{len(errors)} failed runs, see 'errors' in the JSON", file=sys.stderr)
    return 1 if not L else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        kill_all()
