#!/usr/bin/env python3
"""Write a synthetic memory: N core entries in MEMORY.md, M topic entries
spread over 50 topic files. Usage: gen.py DIR CORE TOPIC"""
import os, random, sys
d, ncore, ntopic = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(42)
words = ("order cache redis report api slow index mysql deploy kafka queue latency timeout retry "
         "billing invoice customer schema migration postgres replica shard backup alert pager oncall "
         "service gateway auth token session cookie frontend react build pipeline docker kubernetes").split()
def sent():
    return " ".join(rng.choice(words) for _ in range(rng.randint(8, 30)))
os.makedirs(os.path.join(d, "topics"), exist_ok=True)
with open(os.path.join(d, "MEMORY.md"), "w") as f:
    f.write("# Core profile\n\n## Key decisions\n\n")
    for i in range(ncore):
        f.write(f"- [dec-{i+1:03d}] {sent()} (session summary · 2025-{rng.randint(1,12):02d}-0{rng.randint(1,9)})\n")
    f.write("\n## Pending confirmation\n\n# Topic index\n\n# Archive\n")
per = (ntopic + 49) // 50
n = 0
for t in range(50):
    with open(os.path.join(d, "topics", f"topic-{t:02d}.md"), "w") as f:
        f.write(f"---\ndescription: notes about {rng.choice(words)}\n---\n# Topic {t}\n\n")
        for _ in range(per):
            if n >= ntopic: break
            n += 1
            f.write(f"- [fact-{n:03d}] {sent()} (session · 2025-{rng.randint(1,12):02d}-1{rng.randint(0,9)} · refs s{n})\n")
