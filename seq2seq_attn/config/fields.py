"""What every frozen config of the package shares: the fields a resumed run
may change, declared on the field, and the one way a config is read from a
dict (of JSON), naming any key it does not know."""

import dataclasses


def resumable(default):
    """A config field that a resumed run may change (`resumable_fields`)."""
    return dataclasses.field(default=default, metadata={"resumable": True})


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
