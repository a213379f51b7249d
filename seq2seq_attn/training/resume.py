"""Resuming a run: what the command may change, the training data's
identity, and the logs cut back to the checkpoint the run resumes from."""

import json
import pathlib

from seq2seq_attn.training.config import RESUMABLE, write_atomically


def resumable_changes(recorded, run, model_dir):
    """The fields `run` changes from the `recorded` run that may change on
    resume, as `[(section, field, recorded value, new value)]`.

    Raises:
        ValueError: naming every field that may not change, with both
            values.
    """
    changes = recorded.differences(run)
    refused = [c for c in changes if c[1] not in RESUMABLE[c[0]]]
    if refused:
        named = "; ".join(
            f"--{field} was {old!r}, now {new!r}"
            for _, field, old, new in refused
        )
        raise ValueError(
            f"{model_dir} holds a run that these flags cannot resume: "
            f"{named}. They are fixed by its checkpoints (flags.txt has the "
            "recorded ones); use the recorded values or a new --model_dir"
        )
    return [c for c in changes if c[1] in RESUMABLE[c[0]]]


def check_data_identity(path, identity):
    """Writes `identity` to `path` the first time; later, refuses data whose
    identity differs, naming what differs."""
    path = pathlib.Path(path)
    if not path.is_file():
        write_atomically(path, json.dumps(identity, indent=2) + "\n")
        return
    recorded = json.loads(path.read_text())
    differ = sorted(
        key
        for key in recorded.keys() | identity.keys()
        if recorded.get(key) != identity.get(key)
    )
    if differ:
        named = "; ".join(
            f"{key} was {recorded.get(key)!r}, now {identity.get(key)!r}"
            for key in differ
        )
        raise ValueError(
            f"the training data differ from those {path.parent} was trained "
            f"on ({named}); use a new --model_dir"
        )


def tsv_rows(path):
    """The data rows of a log with a header line (none if missing)."""
    path = pathlib.Path(path)
    if not path.is_file():
        return []
    lines = path.read_text().splitlines()
    return [line.split("\t") for line in lines[1:] if line]


def truncate_log(path, step_column, last_step):
    """Drops the rows of a TSV log whose step is past `last_step`, so that
    a resumed run's rows follow the checkpoint's step without duplicates.
    A row cut short by a kill (no newline) is dropped too. Returns how many
    rows were dropped."""
    path = pathlib.Path(path)
    if not path.is_file():
        return 0
    header, *rows = path.read_text().splitlines(keepends=True)
    kept = [
        row
        for row in rows
        if row.endswith("\n") and int(row.split("\t")[step_column]) <= last_step
    ]
    if len(kept) != len(rows):
        write_atomically(path, header + "".join(kept))
    return len(rows) - len(kept)
