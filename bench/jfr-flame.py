#!/usr/bin/env python3
"""JFR recording (or async-profiler collapsed stacks) -> CPU flame graph (self-contained SVG, hover
for names and shares).

Reads the recording's jdk.ExecutionSample events (threads running Java code, sampled every 10-20 ms
under the JDK's "profile" settings) with the JDK's own `jfr print --json`, folds the stacks, keeps
only threads whose name starts with one of --threads (default: the event loops and tier workers),
and draws the classic icicle-free flame graph: root at the bottom, width = share of samples.

A file ending in .collapsed is read as async-profiler's collapsed stacks instead (`-o collapsed`,
every thread of the process, kernel frames marked _[k] and drawn in blue): what bench/jar-ab.sh's
PROFILE_DIR records. --threads does not apply to it (collapsed stacks carry no thread names).

Usage: bench/jfr-flame.py RECORDING.jfr|STACKS.collapsed OUT.svg [--title T] [--threads prefix,prefix] [--folded OUT.txt]
"""
import argparse
import collections
import html
import json
import subprocess
import sys

WIDTH, ROW, FONT = 1400, 16, 11


def folded_stacks(recording, prefixes):
    out = subprocess.run(["jfr", "print", "--json", "--events", "jdk.ExecutionSample", recording],
                         check=True, capture_output=True, text=True).stdout
    counts = collections.Counter()
    for event in json.loads(out)["recording"]["events"]:
        values = event["values"]
        thread = (values.get("sampledThread") or {}).get("javaName") or "?"
        if prefixes and not thread.startswith(tuple(prefixes)):
            continue
        frames = (values.get("stackTrace") or {}).get("frames") or []
        names = []
        for f in reversed(frames):  # root first
            m = f["method"]
            cls = m["type"]["name"].replace("/", ".")
            names.append(cls.rsplit(".", 1)[-1] + "." + m["name"])
        if names:
            counts[";".join(names)] += 1
    return counts


def build_tree(counts):
    root = {"n": 0, "c": {}}
    for stack, n in counts.items():
        node = root
        node["n"] += n
        for name in stack.split(";"):
            node = node["c"].setdefault(name, {"n": 0, "c": {}})
            node["n"] += n
    return root


def depth(node):
    return 1 + max((depth(c) for c in node["c"].values()), default=0)


def collapsed_stacks(path):
    """async-profiler's collapsed stacks, Java frames shortened to Class.method as the JFR path does."""
    counts = collections.Counter()
    with open(path) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if stack:
                counts[";".join(short(fr) for fr in stack.split(";"))] += int(n)
    return counts


def short(frame):
    if "/" in frame and not frame.endswith("_[k]"):
        return frame.rsplit("/", 1)[-1]
    return frame


def colour(name):
    h = sum(map(ord, name)) % 60
    if name.endswith("_[k]"):
        return f"rgb({90 + h},{150 + h},230)"
    if name.split(".")[0][:1].islower():
        return "rgb(200,200,200)"
    return f"rgb({205 + h // 2},{80 + h * 2},{40 + h})"


def svg(root, title):
    total = max(root["n"], 1)
    levels = depth(root)
    height = (levels + 3) * ROW
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'font-family="monospace" font-size="{FONT}">',
             f'<rect width="100%" height="100%" fill="#fdfdf6"/>',
             f'<text x="{WIDTH / 2}" y="{ROW}" text-anchor="middle" font-size="{FONT + 3}">'
             f'{html.escape(title)} ({root["n"]} samples)</text>']

    def draw(node, name, x, level):
        w = node["n"] / total * WIDTH
        if w < 0.3:
            return
        y = height - (level + 1) * ROW
        label = f'{name} ({node["n"]} samples, {100 * node["n"] / total:.1f}%)'
        parts.append(f'<g><title>{html.escape(label)}</title><rect x="{x:.1f}" y="{y}" width="{max(w - 0.5, 0.1):.1f}" '
                     f'height="{ROW - 1}" fill="{colour(name)}"/>')
        chars = int(w / (FONT * 0.6))
        if chars > 3:
            text = name if len(name) <= chars else name[:chars - 2] + ".."
            parts.append(f'<text x="{x + 2:.1f}" y="{y + ROW - 4}">{html.escape(text)}</text>')
        parts.append('</g>')
        cx = x
        for child_name, child in sorted(node["c"].items()):
            draw(child, child_name, cx, level + 1)
            cx += child["n"] / total * WIDTH

    draw(root, "all", 0.0, 0)
    parts.append("</svg>")
    return "\n".join(parts)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("recording")
    p.add_argument("out")
    p.add_argument("--title", default="CPU samples")
    p.add_argument("--threads", default="vert.x-eventloop,tier-,nexus-resolver,vert.x-worker")
    p.add_argument("--folded")
    a = p.parse_args()
    prefixes = [t for t in a.threads.split(",") if t]
    if a.recording.endswith(".collapsed"):
        counts = collapsed_stacks(a.recording)
    else:
        counts = folded_stacks(a.recording, prefixes)
    if a.folded:
        with open(a.folded, "w") as f:
            for stack, n in counts.most_common():
                f.write(f"{stack} {n}\n")
    with open(a.out, "w") as f:
        f.write(svg(build_tree(counts), a.title))
    print(f"{a.out}: {sum(counts.values())} samples", file=sys.stderr)


if __name__ == "__main__":
    main()
