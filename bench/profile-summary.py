#!/usr/bin/env python3
"""CPU per request from async-profiler's collapsed stacks, and the difference between two profiles.

A rate on this 2-core VM moves by 10-20 % from one run to the next, so a change worth 2 % of a
request cannot be seen in req/s. A CPU profile can: with `-e cpu -i INTERVAL` every sample stands
for INTERVAL of CPU, so samples x INTERVAL / requests is the CPU a request costs in each frame,
whatever the machine's phase did to the rate.

Usage:
  bench/profile-summary.py A.collapsed:REQUESTS [B.collapsed:REQUESTS] [--interval-us 200] [--top 30]

REQUESTS is the number of requests served while the profiler ran (rate x profiled seconds). With
one profile: µs per request in the named groups (inclusive: a stack counts in every group one of
its frames belongs to) and in the top self frames. With two: the same for both, side by side, and
the self frames whose cost moved most (B - A).
"""
import argparse
import collections
import sys

# Inclusive groups: a stack belongs to a group when any of its frames starts with (or, for kernel
# frames, equals) one of the group's prefixes.
GROUPS = [
    ("all (process CPU)", ("",)),
    ("kernel: every syscall", ("do_syscall_64_[k]",)),
    ("kernel: TCP send (loopback: the receiver's softirq too)", ("tcp_sendmsg_[k]",)),
    ("kernel: XDP and TC programs", ("bpf_prog_",)),
    ("kernel: scheduler (switches, wake-ups)", ("schedule_[k]", "try_to_wake_up_[k]")),
    ("futex (park, unpark)", ("__x64_sys_futex_[k]",)),
    ("sched_yield", ("__x64_sys_sched_yield_[k]",)),
    ("event loop wake-up (eventfd)", ("eventfd_write_[k]",)),
    ("Wasm guests (Chicory)", ("com/dylibso/",)),
    ("tier worker handoff (queue take)", ("io/nexuscore/tiers/SpinThenParkQueue.take",)),
    ("JSON (Jackson)", ("com/fasterxml/",)),
    ("metrics (Micrometer, HdrHistogram)", ("io/micrometer/", "org/HdrHistogram/")),
    ("router code (io/nexuscore, inclusive)", ("io/nexuscore/",)),
    ("JVM threads (GC, JIT)", ("GCTaskThread", "G1", "C2Compiler", "CompileBroker", "JavaThread::thread_main_inner")),
]


def load(spec):
    path, _, requests = spec.rpartition(":")
    if not path or not requests:
        sys.exit(f"profile-summary: give each profile as FILE:REQUESTS, not '{spec}'")
    stacks = collections.Counter()
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, n = line.rpartition(" ")
            stacks[stack] += int(n)
    return path, float(requests), stacks


USER_SPACE = "user space (stacks without a kernel frame)"


def in_group(frames, prefixes):
    return any(fr.startswith(p) for fr in frames for p in prefixes)


def per_request(stacks, requests, interval_us):
    groups = collections.Counter()
    selfs = collections.Counter()
    for stack, n in stacks.items():
        frames = stack.split(";")
        selfs[frames[-1]] += n
        for name, prefixes in GROUPS:
            if in_group(frames, prefixes):
                groups[name] += n
        if not any(fr.endswith("_[k]") for fr in frames):
            groups[USER_SPACE] += n
    k = interval_us / requests
    return {g: n * k for g, n in groups.items()}, {f: n * k for f, n in selfs.items()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("profiles", nargs="+")
    p.add_argument("--interval-us", type=float, default=200.0)
    p.add_argument("--top", type=int, default=30)
    a = p.parse_args()
    if len(a.profiles) > 2:
        sys.exit("profile-summary: one or two profiles")
    loaded = [load(s) for s in a.profiles]
    results = [per_request(stacks, requests, a.interval_us) for _, requests, stacks in loaded]
    names = [path for path, _, _ in loaded]
    print("µs of CPU per request (" + " | ".join(names) + ")")
    print("\n# groups (inclusive)")
    for name in [g for g, _ in GROUPS[:1]] + [USER_SPACE] + [g for g, _ in GROUPS[1:]]:
        cells = "  ".join(f"{r[0].get(name, 0.0):7.2f}" for r in results)
        print(f"{cells}  {name}")
    print("\n# self frames")
    if len(results) == 1:
        for frame, us in sorted(results[0][1].items(), key=lambda kv: -kv[1])[:a.top]:
            print(f"{us:7.2f}  {frame}")
        return
    a_self, b_self = results[0][1], results[1][1]
    frames = set(a_self) | set(b_self)
    moved = sorted(frames, key=lambda fr: -abs(b_self.get(fr, 0.0) - a_self.get(fr, 0.0)))
    for frame in moved[:a.top]:
        x, y = a_self.get(frame, 0.0), b_self.get(frame, 0.0)
        print(f"{x:7.2f}  {y:7.2f}  {y - x:+7.2f}  {frame}")


if __name__ == "__main__":
    main()
