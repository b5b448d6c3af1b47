"""Where a kernel's instructions and stall samples go, from Nsight Compute's per-SASS source page
(`ncu -i R.ncu-rep --page source --print-source sass --csv`, as bench/ncu_device_run.sh writes
it): the SASS cut into runs of BUCKET instructions, and for each
run holding >= 1 % of the executed instructions or of the stall samples, its share of both and
its commonest opcodes. Used to find the copy-in and panel costs of the interleaved block kind
(bench/NOTES.md).

    python3 -m bench.sass_regions ncu_NAME_sass.csv [BUCKET]
"""

from __future__ import annotations

import collections
import csv
import re
import sys


def main(path: str, bucket: int = 64):
    rows = list(csv.reader(open(path)))
    head, data = rows[1], rows[2:]
    col = {name: head.index(name) for name in ("Address", "Source", "Instructions Executed",
                                                 "Warp Stall Sampling (All Samples)")}
    ins = [(int(r[col["Address"]], 16), r[col["Source"]].strip(), int(r[col["Instructions Executed"]] or 0),
            int(r[col["Warp Stall Sampling (All Samples)"]] or 0)) for r in data if r[col["Address"]].startswith("0x")]
    base = ins[0][0]
    executed, samples = sum(i[2] for i in ins), sum(i[3] for i in ins)
    print(f"executed {executed} warp instructions, {samples} stall samples")
    for k in range(0, len(ins), bucket):
        run = ins[k:k + bucket]
        ex, sm = sum(i[2] for i in run), sum(i[3] for i in run)
        if ex < 0.01 * executed and sm < 0.01 * samples:
            continue
        ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", i[1]).split()[0].split(".")[0] for i in run if i[2])
        print(f"{run[0][0] - base:#07x}-{run[-1][0] - base:#07x}  executed {100 * ex / executed:5.1f} %  "
              f"samples {100 * sm / samples:5.1f} %  {ops.most_common(4)}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 64)
