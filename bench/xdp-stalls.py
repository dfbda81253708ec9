#!/usr/bin/env python3
"""Where a loaded BPF program spends its samples, by source line: perf's samples mapped through the
program's own JIT line table.

perf names a BPF program's functions but cannot annotate them here (no libopcodes in Debian's
perf, no libbfd in its bpftool). The kernel can say where each source line's code starts in the
JIT image (bpf_prog_info.jited_line_info, one address per line_info record), and `bpftool prog
dump xlated ... linum` names each record's source line. So every sample whose address falls in
the program is counted on the line whose JIT code holds it. Under real traffic the samples pile
up just after the loads that missed the cache (the instruction after a stalled load is where the
timer interrupt lands) and after calls into other functions (the callee's code had to be fetched).

The program must still be loaded (the same instance perf sampled): run this before stopping the
router. Usage, as root:
  bench/xdp-stalls.py PERF_DATA [--prog nexus_classify] [--top 25]
"""
import argparse
import bisect
import collections
import ctypes
import ctypes.util
import json
import re
import struct
import subprocess
import sys

SYS_BPF = 321  # x86-64
BPF_PROG_GET_FD_BY_ID = 13
BPF_OBJ_GET_INFO_BY_FD = 15
INFO_SIZE = 256  # bytes of struct bpf_prog_info passed in; the fields read below are all before 184

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    rc = libc.syscall(SYS_BPF, cmd, buf, 128)
    if rc < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"bpf(cmd {cmd}): errno {errno}")
    return rc


def prog_info(fd, request=None):
    """bpf_prog_info of fd; request pre-fills the array pointers and counts (a second call)."""
    buf = ctypes.create_string_buffer(request or b"\0" * INFO_SIZE, INFO_SIZE)
    bpf(BPF_OBJ_GET_INFO_BY_FD, struct.pack("IIQ", fd, INFO_SIZE, ctypes.addressof(buf)))
    return buf.raw


def jit_layout(prog_id):
    """(functions [(start, length)], lines [(jit address, xlated insn offset)]) of a loaded program."""
    fd = bpf(BPF_PROG_GET_FD_BY_ID, struct.pack("I", prog_id))
    first = prog_info(fd)
    nr_ksyms, nr_lens = struct.unpack_from("II", first, 104)
    nr_lines, = struct.unpack_from("I", first, 148)
    nr_jited_lines, line_rec, jited_rec = struct.unpack_from("III", first, 168)
    if nr_jited_lines == 0 or jited_rec != 8:
        sys.exit(f"xdp-stalls: program {prog_id} has no JIT line info (loaded without BTF?)")
    ksyms = (ctypes.c_uint64 * nr_ksyms)()
    lens = (ctypes.c_uint32 * nr_lens)()
    lines = ctypes.create_string_buffer(nr_lines * line_rec)
    jited = (ctypes.c_uint64 * nr_jited_lines)()
    req = bytearray(INFO_SIZE)
    struct.pack_into("II", req, 104, nr_ksyms, nr_lens)
    struct.pack_into("QQ", req, 112, ctypes.addressof(ksyms), ctypes.addressof(lens))
    struct.pack_into("I", req, 148, nr_lines)
    struct.pack_into("QQ", req, 152, ctypes.addressof(lines), ctypes.addressof(jited))
    struct.pack_into("III", req, 168, nr_jited_lines, line_rec, jited_rec)
    prog_info(fd, bytes(req))
    functions = [(ksyms[i], lens[i]) for i in range(nr_ksyms)]
    # line_info records: insn_off, file_name_off, line_off, line_col (16 bytes each)
    table = sorted((jited[k], struct.unpack_from("I", lines.raw, k * line_rec)[0]) for k in range(nr_jited_lines))
    return functions, table


def source_by_insn(prog_id):
    """xlated insn offset -> the source line bpftool prints above it."""
    text = subprocess.run(["bpftool", "prog", "dump", "xlated", "id", str(prog_id), "linum"],
                          check=True, capture_output=True, text=True).stdout
    names, current = {}, None
    for line in text.splitlines():
        if line.startswith(";"):
            m = re.match(r";\s*(.*?)\s*\[file:(\S+) line_num:(\d+)", line)
            current = f"{m.group(2).rsplit('/', 1)[-1]}:{m.group(3)}  {m.group(1)[:90]}" if m else line[1:90]
        else:
            m = re.match(r"\s*(\d+):", line)
            if m and current:
                names.setdefault(int(m.group(1)), current)
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("perf_data")
    ap.add_argument("--prog", default="nexus_classify")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()

    progs = [p for p in json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], check=True,
                                                  capture_output=True, text=True).stdout)
             if p.get("name") == args.prog]
    if not progs:
        sys.exit(f"xdp-stalls: no loaded program named {args.prog}")
    prog_id = max(p["id"] for p in progs)
    functions, table = jit_layout(prog_id)
    addrs = [a for a, _ in table]
    names = source_by_insn(prog_id)
    name_keys = sorted(names)

    script = subprocess.run(["perf", "script", "-i", args.perf_data, "-F", "ip,sym"], check=True,
                            capture_output=True, text=True).stdout
    per_function, per_line, total, inside = collections.Counter(), collections.Counter(), 0, 0
    for row in script.splitlines():
        parts = row.split()
        if not parts:
            continue
        total += 1
        try:
            ip = int(parts[0], 16)
        except ValueError:
            continue
        for i, (start, length) in enumerate(functions):
            if start <= ip < start + length:
                inside += 1
                per_function[(i, parts[1] if len(parts) > 1 else "?")] += 1
                k = bisect.bisect_right(addrs, ip) - 1
                insn = table[k][1] if k >= 0 else 0
                j = bisect.bisect_right(name_keys, insn) - 1
                per_line[names[name_keys[j]] if j >= 0 else "?"] += 1
                break
    print(f"program {args.prog} (id {prog_id}): {inside} of {total} samples")
    for (i, name), n in sorted(per_function.items(), key=lambda kv: -kv[1]):
        print(f"  {n:6d} {100.0 * n / max(inside, 1):5.1f} %  function {i}: {name}")
    print(f"top {args.top} source lines:")
    for line, n in per_line.most_common(args.top):
        print(f"  {n:6d} {100.0 * n / max(inside, 1):5.1f} %  {line}")


if __name__ == "__main__":
    main()
