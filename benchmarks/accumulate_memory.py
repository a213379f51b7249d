"""Peak memory and speed of training with `--accumulate_batches=k`.

    python benchmarks/accumulate_memory.py [--ks=1,8,32] [--batches=96]
        [--package=PATH]

Each k trains `configs/multi30k/joey_match.flags` (12.3 M parameters,
batches of 64 sentences) on `--batches` batches (`--batches` / k updates)
in a fresh process, reading
Multi30k from ../shared/data and validating one sentence at the end. Printed
per k: the process's peak RSS (`ru_maxrss` from `os.wait4`), and the
target tokens per second of the updates after the first (which includes the
tracing), from `train_log.tsv`. `--package` puts another checkout's
package first on `PYTHONPATH` (an A/B against an earlier commit).
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def run(k, steps, package):
    """`(peak RSS in MB, tokens/s after the first update)` of one run."""
    model_dir = pathlib.Path(tempfile.mkdtemp()) / "model"
    command = [
        sys.executable,
        "-m",
        "seq2seq_attn.train",
        f"--flagfile={ROOT / 'configs' / 'multi30k' / 'joey_match.flags'}",
        f"--model_dir={model_dir}",
        f"--data_dir={DATA}",
        f"--accumulate_batches={k}",
        f"--max_steps={steps}",
        "--valid_max_sentences=1",
        "--log_every=1",
    ]
    env = dict(os.environ)
    if package:
        env["PYTHONPATH"] = package
    process = subprocess.Popen(
        command,
        env=env,
        cwd=package or ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(process.stderr.read().decode()[-3000:])
    rows = (model_dir / "train_log.tsv").read_text().splitlines()[2:]
    speeds = [float(row.split("\t")[4]) for row in rows]
    return usage.ru_maxrss / 1024, sum(speeds) / max(len(speeds), 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ks", default="1,8,32")
    parser.add_argument("--batches", type=int, default=96)
    parser.add_argument("--package", default=None)
    args = parser.parse_args()
    print("| k | peak RSS (MB) | target tokens/s after the first update |")
    print("|---|---|---|")
    for k in map(int, args.ks.split(",")):
        peak, speed = run(k, max(args.batches // k, 2), args.package)
        print(f"| {k} | {peak:,.0f} | {speed:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
