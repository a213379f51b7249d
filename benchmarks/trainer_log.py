"""The lines of our trainer's and decoding benchmark's logs that the report
scripts read (`side_by_side.py`, `runs_table.py`)."""

import re

# "training luong: 8,200,000 parameters, ..."
PARAMS = re.compile(r"training \w+: ([\d,]+) parameters")
# "epoch 5: 389,706 target tokens in 156.4 s of training (2,492.3 tokens/s,
# mean loss 3.1234)"; before 7318a68 the line ended at "tokens/s)".
EPOCH = re.compile(
    r"epoch (\d+): ([\d,]+) target tokens in ([\d.]+) s of training"
)
# benchmarks/decoding_speed.py: "beam 5: 104.0 sentences/s (9.6 s), BLEU ..."
DECODE = re.compile(
    r"^(greedy|beam 5): ([\d.]+) sentences/s \([\d.]+ s\), BLEU ([\d.]+)",
    re.M,
)


def per_epoch(matches):
    """{epoch: [tokens, seconds]} from `(epoch, tokens, seconds)` strings; a
    resumed epoch is reported twice (before and after the resume, each for
    its own steps): the parts add up."""
    epochs = {}
    for epoch, tokens, seconds in matches:
        parts = epochs.setdefault(int(epoch), [0, 0.0])
        parts[0] += int(tokens.replace(",", ""))
        parts[1] += float(seconds)
    return epochs
