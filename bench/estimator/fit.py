#!/usr/bin/env python3
"""The block weights of token-blocks.tsv, fitted (bench/estimator-fit.sh runs this).

The ASCII coefficients stay as they are (PromptEstimate: words 537, second blanks 657, punctuation
runs 909, digit runs 2005, letters 129 per UTF-8 byte), so English and code do not move. What a
script's characters cost beyond that is fitted per group of blocks by non-negative least squares
on the relative error, every kind of the fit half weighing the same, capped at 3 tokens a
character; blocks of no group keep the hand-set lines (FIXED). Prints the fitted lines and, on the
held-out half, the mean and mean absolute relative error and the strict tier disagreement at the
default thresholds (60/130) of the estimate before the blocks (one weight for every 2-byte
character, 128, and one for every longer one, 613), of the shipped table and of the refit.
  fit.py FIT.csv HELD_OUT.csv
"""
import csv, sys
import numpy as np
from scipy.optimize import nnls

ASCII_Q10 = {"words": 537, "second_blanks": 657, "punct_runs": 909, "digit_runs": 2005, "letters": 129}
SUPPLEMENTARY = 1024
CAP_Q10 = 3072


def blocks(first, last):
    return list(range(first >> 6, (last >> 6) + 1))


FIXED = [(0x0000, 0x007F, 128), (0x0080, 0x07FF, 1800), (0x0080, 0x00BF, 1024), (0x0400, 0x047F, 128),
         (0x0800, 0x1FFF, 1800), (0x2000, 0xFFFF, 613)]
GROUPS = {
    "Latin-1 letters": (0x00C0, 0x00FF), "Latin Extended-A": (0x0100, 0x017F), "Latin Extended-B": (0x0180, 0x023F),
    "Greek": (0x0380, 0x03FF), "Cyrillic, extended letters": (0x0480, 0x04FF),
    "Cyrillic Supplement, Armenian capitals": (0x0500, 0x053F), "Armenian": (0x0540, 0x05BF),
    "Hebrew letters": (0x05C0, 0x05FF), "Arabic": (0x0600, 0x06FF), "Devanagari": (0x0900, 0x097F),
    "Bengali": (0x0980, 0x09FF), "Gurmukhi": (0x0A00, 0x0A7F), "Gujarati": (0x0A80, 0x0AFF), "Oriya": (0x0B00, 0x0B7F),
    "Tamil": (0x0B80, 0x0BFF), "Telugu": (0x0C00, 0x0C7F), "Kannada": (0x0C80, 0x0CFF), "Malayalam": (0x0D00, 0x0D7F),
    "Sinhala": (0x0D80, 0x0DFF), "Thai": (0x0E00, 0x0E7F), "Myanmar": (0x1000, 0x10BF), "Georgian": (0x10C0, 0x10FF),
    "Khmer": (0x1780, 0x17FF), "Latin Extended Additional": (0x1E00, 0x1EFF),
}


def load(path):
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        r["blk"] = {int(k, 16): int(v) for k, v in (x.split(":") for x in r["blocks"].split(";") if x)}
    return rows


def ascii_q10(r):
    return sum(w * float(r[n]) for n, w in ASCII_Q10.items())


def tier(tokens):
    return 0 if tokens <= 60 else 1 if tokens <= 130 else 2


fit_rows, held_out = load(sys.argv[1]), load(sys.argv[2])
table = {}
for first, last, weight in FIXED:
    for b in blocks(first, last):
        table[b] = weight
members = {name: blocks(*span) for name, span in GROUPS.items()}
members["outside the BMP"] = [SUPPLEMENTARY]
grouped = {b for bl in members.values() for b in bl}
kinds = {}
for r in fit_rows:
    kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
X, Y = [], []
for r in fit_rows:
    truth = float(r["truth"])
    fixed = ascii_q10(r) + sum(c * table[b] for b, c in r["blk"].items() if b not in grouped)
    w = (1.0 / kinds[r["kind"]]) ** 0.5 / truth
    X.append([sum(r["blk"].get(b, 0) for b in bl) * w for bl in members.values()])
    Y.append((truth * 1024 - fixed) * w)
coef, _ = nnls(np.array(X), np.array(Y))
weights = {name: min(CAP_Q10, int(round(c))) for name, c in zip(members, coef)}
refit = dict(table)
for name, bl in members.items():
    for b in bl:
        refit[b] = weights[name]

print("# fitted lines (token-blocks.tsv format: first, last, weight in 1/1024 tokens, what)")
for name, (first, last) in GROUPS.items():
    print(f"{first:04X}\t{last:04X}\t{weights[name]}\t{name}")
print(f"10000\t10FFFF\t{weights['outside the BMP']}\toutside the BMP")


def estimate(r):
    return (ascii_q10(r) + sum(c * refit.get(b, 0) for b, c in r["blk"].items())) / 1024


def before_blocks(r):
    return (ascii_q10(r) + sum(c * (128 if b < 0x20 else 613) for b, c in r["blk"].items())) / 1024


print()
print("held-out half: relative error and strict tier disagreement (60/130): before the blocks | shipped table | this refit")
head = f"{'mean':>7s} {'|mean|':>7s} {'strict':>7s}"
print(f"{'kind':22s} {'n':>4s} {head} | {head} | {head}")
for kind in sorted({r["kind"] for r in held_out}):
    rows = [r for r in held_out if r["kind"] == kind]
    cols = []
    for f in (before_blocks, lambda r: float(r["estimate"]), estimate):
        rel = [(f(r) - float(r["truth"])) / float(r["truth"]) for r in rows]
        strict = sum(tier(f(r)) != tier(float(r["truth"])) for r in rows) / len(rows)
        cols.append(f"{100 * np.mean(rel):6.1f}% {100 * np.mean(np.abs(rel)):6.1f}% {100 * strict:6.1f}%")
    print(f"{kind:22s} {len(rows):4d} {cols[0]} | {cols[1]} | {cols[2]}")
