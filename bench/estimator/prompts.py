#!/usr/bin/env python3
"""Prompts for bench/estimator-fit.sh, cut from text on this Debian machine.

Translations (the msgstr strings of /usr/share/locale/LANG/LC_MESSAGES/*.mo) are split by package:
a package whose file name's CRC-32 is even goes to the fit half, odd to the held-out half, so the
check never sees text the weights were fitted on. English, code and the shared corpus are added
to the fit half so that a weight cannot buy a script's accuracy with English's.
  prompts.py OUT_DIR CORPUS_DIR
"""
import glob, gzip, json, math, os, random, re, subprocess, sys, zlib

out_dir, corpus = sys.argv[1], sys.argv[2]
random.seed(13)
PER_KIND = 150
LANGS = ("ar he el hi bn ta th vi fa ka hy ml te kn gu mr ne si km pa or my pl tr cs de fr es ru uk ja "
         "zh_CN ko sk hu ro lt lv hr sr bg mk be kk lo dz am dv").split()


def windows(text, lo=60, hi=1400, prefix=""):
    if len(text) < hi * 2:
        return []
    out = []
    for _ in range(PER_KIND):
        size = int(math.exp(random.uniform(math.log(lo), math.log(hi))))
        start = random.randint(0, len(text) - size)
        out.append(prefix + text[start:start + size])
    return out


def translations(files):
    parts = []
    for f in sorted(files):
        po = subprocess.run(["msgunfmt", "--no-wrap", f], capture_output=True, timeout=30).stdout.decode("utf-8", "ignore")
        for m in re.finditer(r'^msgstr(?:\[\d\])? "(.*)"$', po, re.M):
            s = m.group(1).replace('\\n', '\n').replace('\\"', '"').replace('\\t', '\t').replace('\\\\', '\\')
            if len(s) > 3:
                parts.append(s)
    random.shuffle(parts)
    return "\n".join(parts)


def files_text(pattern, limit):
    files = sorted(glob.glob(pattern, recursive=True))
    random.shuffle(files)
    text = ""
    for f in files[:limit]:
        try:
            text += open(f, errors="ignore").read() + "\n"
        except OSError:
            pass
    return text


def man_text(pattern, limit=300):
    out = []
    for f in sorted(glob.glob(pattern))[:limit]:
        t = gzip.open(f).read().decode("utf-8", errors="ignore")
        out.append("\n".join(l for l in t.split("\n") if not l.startswith((".", "'"))))
    return "\n".join(out)


def write(half, kind, prompts):
    if not prompts:
        return
    os.makedirs(os.path.join(out_dir, half), exist_ok=True)
    with open(os.path.join(out_dir, half, kind + ".jsonl"), "w") as f:
        for p in prompts:
            f.write(json.dumps({"prompt": p}, ensure_ascii=False) + "\n")


for lang in LANGS:
    mo = sorted(glob.glob(f"/usr/share/locale/{lang}/LC_MESSAGES/*.mo"))
    for half, parity in (("fit", 0), ("held-out", 1)):
        chosen = [f for f in mo if zlib.crc32(os.path.basename(f).encode()) % 2 == parity]
        write(half, "mo-" + lang, windows(translations(chosen), prefix="Translate to English:\n"))
for name in ("gsm8k-test", "mt-bench-questions"):
    write("fit", name, [json.loads(l)["prompt"] for l in open(os.path.join(corpus, name + ".jsonl"))])
write("fit", "en-man", windows(man_text("/usr/share/man/man1/*.gz"), prefix="Summarize:\n"))
write("fit", "code-python", windows(files_text("/usr/lib/python3/dist-packages/**/*.py", 400), prefix="Explain this code:\n"))
write("fit", "code-c", windows(files_text("/usr/include/**/*.h", 400), prefix="Review this header:\n"))
emoji = "😀😂🥲😍🤔🙄😴🥳🎉🔥💯👍👀🚀✨❤️🙏🤖🍕☕️🐍🌍"
words = "hey did you see the launch yesterday it was amazing can't wait for next week what do you think".split()
write("fit", "emoji-chat", [" ".join(random.choice(words) + (random.choice(emoji) * random.randint(0, 3)
                                                             if random.random() < 0.4 else "")
                                     for _ in range(random.randint(10, 200))) for _ in range(PER_KIND)])
for lang in "de fr es it pl pt nl sv tr ru uk ja ko zh_CN".split():
    write("fit", "man-" + lang, windows(man_text(f"/usr/share/man/{lang}/man*/*.gz"), prefix="Summarize:\n"))
