#!/usr/bin/env python3
"""Writes unseen-structured.jsonl or unseen-python.jsonl: requests around snippets of structured data
found on a Debian machine (JSON, CSV, logs, HTML, XML, YAML, configuration files, numeric series) or
of Python's standard library (fenced as markdown, as chat users paste code), kinds of prompt no
estimator constant was fitted to. Deterministic for the same files (seeded choices, snippets cut at
line boundaries to a drawn size).
Run: python3 bench/data/make-structured.py [structured|python] > bench/data/unseen-KIND.jsonl
"""
import glob
import json
import random
import sys

rng = random.Random(20261203)

KINDS = [
    ("json", ["/usr/share/iso-codes/json/iso_3166-1.json", "/usr/share/iso-codes/json/iso_4217.json",
              "/usr/share/iso-codes/json/iso_639-3.json", "/usr/share/doc/nodejs/api/index.json",
              "/usr/share/doc/nodejs/api/synopsis.json"],
     ["Extract every name and code from this JSON and list them as a table:\n",
      "Validate this JSON fragment and tell me which fields are missing:\n",
      "Convert this JSON into YAML:\n"]),
    ("numbers-json", ["/usr/share/doc/libjs-rickshaw/examples/data/data.json",
                      "/usr/share/doc/libjs-rickshaw/examples/data/data2.json"],
     ["What is the trend in this time series? ", "Find the maximum y value in this data: "]),
    ("csv", ["/usr/share/distro-info/debian.csv", "/usr/share/distro-info/ubuntu.csv"],
     ["Which releases in this CSV were supported for the longest time?\n",
      "Turn this CSV into a markdown table:\n"]),
    ("log", ["/var/log/dpkg.log", "/var/log/apt/history.log"],
     ["Summarise what happened in this package manager log:\n",
      "Which packages were upgraded according to this log?\n"]),
    ("html", sorted(glob.glob("/usr/share/doc/libffi8/html/*.html")) + ["/usr/share/doc/base-passwd/users-and-groups.html"],
     ["Strip the markup from this HTML and give me the plain text:\n",
      "Fix any invalid HTML in this snippet:\n"]),
    ("xml", sorted(glob.glob("/usr/share/maven-repo/org/apache/*/*/*-site.xml"))[:6],
     ["Explain what this XML configuration does:\n", "Convert this XML to JSON:\n"]),
    ("config", ["/etc/prometheus/prometheus.yml", "/etc/ssh/sshd_config", "/etc/login.defs", "/etc/adduser.conf",
                "/etc/sysctl.conf", "/etc/nsswitch.conf"],
     ["Review this configuration file and point out risky settings:\n",
      "Explain each setting in this configuration:\n"]),
]

PYTHON = [("python", sorted(glob.glob("/usr/lib/python3*/json/*.py") + glob.glob("/usr/lib/python3*/email/*.py")
                           + glob.glob("/usr/lib/python3*/http/*.py")),
           ["Explain what this Python function does:\n", "Find the bug in this code:\n",
            "Add type hints to this Python code:\n", "Write unit tests for this:\n"])]

PER_KIND = 12


def readable(paths):
    texts = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        if len(text) > 400:
            texts.append((path, text))
    return texts


def snippet(text, size):
    lines = text.splitlines(keepends=True)
    start = rng.randrange(max(1, len(lines) - 5))
    out = ""
    for line in lines[start:]:
        if len(out) + len(line) > size and out:
            break
        out += line
    return out[:max(size, 40) * 2]


python = len(sys.argv) > 1 and sys.argv[1] == "python"
for kind, paths, asks in PYTHON if python else KINDS:
    texts = readable(paths)
    if not texts:
        continue
    for i in range(40 if python else PER_KIND):
        path, text = texts[i % len(texts)]
        size = int(rng.uniform(80, 900) if python else rng.uniform(60, 700))
        cut = snippet(text, size).rstrip()
        body = "```python\n" + cut + "\n```" if python else cut
        print(json.dumps({"prompt": rng.choice(asks) + body, "kind": kind, "source": path}, ensure_ascii=False))
