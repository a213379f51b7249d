"""Resuming a run: what the command may change, the training data's
identity, and the logs cut back to the checkpoint the run resumes from."""

import json
import pathlib

from seq2seq_attn.config.run import (
    RESUMABLE,
    RunConfig,
    read_json,
    write_atomically,
)


def changes_on_resume(paths, run):
    """The changes `run` makes to the run recorded in `paths` (a
    `ModelDir`; none for a new run) that may change on resume (see
    `config.RESUMABLE`); refuses the others, naming them."""
    if not paths.config.is_file():
        return []
    recorded = RunConfig.load(paths.path)
    return resumable_changes(recorded, run, paths.path)


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
    recorded = read_json(path)
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


def _row_step(row, step_column, columns):
    """The step of a whole log row, or None for a damaged one: fewer or
    more fields, a step that is not a count, or a field that is not a
    number (a full disk's zeros, an edit)."""
    fields = row.rstrip("\n").split("\t")
    if len(fields) != columns or not fields[step_column].isdigit():
        return None
    try:
        [float(field) for field in fields]
    except ValueError:
        return None
    return int(fields[step_column])


def truncate_log(path, header, step_column, last_step):
    """Drops the rows of a TSV log whose step is past `last_step`, so that
    a resumed run's rows follow the checkpoint's step without duplicates.
    A last row cut short by a kill (no newline) is dropped with them, and a
    damaged row (`_row_step`) is dropped and counted apart; a log left empty
    or without its header line gets `header` (a log's own header, from an
    earlier version, is kept). Returns `(past, damaged)`: how many rows of
    each were dropped."""
    path = pathlib.Path(path)
    if not path.is_file():
        return 0, 0
    lines = path.read_text(errors="replace").splitlines(keepends=True)
    first = lines[0] if lines else ""
    has_header = first.endswith("\n") and not first[:1].isdigit()
    rows = lines[1:] if has_header else lines
    header = first if has_header else header
    columns = header.count("\t") + 1
    kept, damaged = [], 0
    for row in rows:
        if not row.endswith("\n"):
            continue  # the last row, cut short by a kill: past the step
        step = _row_step(row, step_column, columns)
        if step is None:
            damaged += 1
        elif step <= last_step:
            kept.append(row)
    if not has_header or len(kept) != len(rows):
        write_atomically(path, header + "".join(kept))
    return len(rows) - len(kept) - damaged, damaged


TRAIN_LOG_HEADER = "step\tepoch\tloss\tlearning_rate\ttokens_per_s\n"
VALIDATION_LOG_HEADER = "epoch\tstep\tperplexity\tbleu\n"


def cut_logs_to_checkpoint(paths, step, validated_step, log=print):
    """Cuts the train and validation logs of `paths` (a `ModelDir`) back to
    the restored `step` and `validated_step` (to their headers where no
    checkpoint was restored), so that the rows of steps a kill lost are
    not logged twice; a log that a kill or a full disk left empty or cut
    short is repaired, and a damaged row is dropped and said."""
    logs = [
        (paths.train_log, TRAIN_LOG_HEADER, 0, step),
        (paths.validation_log, VALIDATION_LOG_HEADER, 1, validated_step),
    ]
    for path, header, column, step in logs:
        past, damaged = truncate_log(path, header, column, step)
        if past:
            log(
                f"removed {past} row(s) of {path.name} past the "
                f"checkpoint (step {step})"
            )
        if damaged:
            log(
                f"warning: removed {damaged} damaged row(s) of {path} (a "
                "field that is not a number, or fields missing)"
            )


def append_rows(path, header, lines):
    """Appends `lines` to a TSV log, writing `header` first if it is new."""
    new = not path.exists()
    with open(path, "a") as stream:
        if new:
            stream.write(header)
        stream.writelines(lines)


def last_validation(path):
    """The metrics of the last row of the validation log (or {})."""
    rows = tsv_rows(path)
    if not rows:
        return {}
    epoch, step, logged_perplexity, bleu = rows[-1][:4]
    return dict(
        epoch=int(epoch),
        step=int(step),
        perplexity=float(logged_perplexity),
        bleu=float(bleu),
    )
