"""What every frozen config of the package shares: what is declared on a
field (that a resumed run may change it; a size's floor and ceiling), and
the one way a config is read from a dict (of JSON), naming any key it does
not know."""

import dataclasses

# A count that the graph holds as an int32 (ids, shapes, indices).
INT32_MAX = 2**31 - 1


def resumable(default):
    """A config field that a resumed run may change (`resumable_fields`)."""
    return dataclasses.field(default=default, metadata={"resumable": True})


def sized(
    default,
    floor,
    ceiling=INT32_MAX,
    why="an int32 of the graph",
    resumable=False,
    optional=False,
):
    """An integer config field with its floor and ceiling (`check_sizes`):
    `why` says what sets the ceiling; `optional`: None is allowed (no
    limit, or a default derived from another field). `resumable` as for
    `resumable`."""
    metadata = {"floor": floor, "ceiling": ceiling, "why": why}
    if optional or default is None:
        metadata["optional"] = True
    if resumable:
        metadata["resumable"] = True
    return dataclasses.field(default=default, metadata=metadata)


def check_sizes(config, section):
    """Refuses, by name, a `sized` field of `config` that is not an integer
    or lies outside its floor and ceiling: "SECTION: NAME must be at most
    CEILING (WHY), got VALUE" (no "SECTION: " where `section` is "")."""
    for field in dataclasses.fields(config):
        if "ceiling" not in field.metadata:
            continue
        value = getattr(config, field.name)
        if value is None and field.metadata.get("optional"):
            continue
        floor, ceiling = field.metadata["floor"], field.metadata["ceiling"]
        where = f"{section}: {field.name}" if section else field.name
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where} must be an integer, got {value!r}")
        if value < floor:
            raise ValueError(f"{where} must be >= {floor}, got {value}")
        if value > ceiling:
            raise ValueError(
                f"{where} must be at most {ceiling:,} "
                f"({field.metadata['why']}), got {value:,}"
            )


def resumable_fields(config_class):
    """The names of the fields of `config_class` declared `resumable`."""
    return frozenset(
        field.name
        for field in dataclasses.fields(config_class)
        if field.metadata.get("resumable")
    )


def from_dict(config_class, values, where):
    """`config_class(**values)`, refusing a key that is not one of its
    fields; `where` names the source in the error ("config.json: model")."""
    if not isinstance(values, dict):
        raise ValueError(
            f"{where}: expected an object of fields, got {values!r}"
        )
    known = {field.name for field in dataclasses.fields(config_class)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"{where}: unknown fields {unknown}")
    return config_class(**values)
