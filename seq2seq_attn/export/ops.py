"""The operations a SavedModel uses, checked against the allowlist of ops
that the stock TF Serving image (TensorFlow 2.20 and tensorflow-text 2.20)
provides."""

import pathlib

ALLOWLIST = pathlib.Path(__file__).with_name("allowed_ops.txt")


def saved_model_ops(export_path):
    """Every op type in every graph and function of a SavedModel."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved_model = saved_model_pb2.SavedModel()
    data = (pathlib.Path(export_path) / "saved_model.pb").read_bytes()
    saved_model.ParseFromString(data)
    ops, functions = set(), set()
    for graph in saved_model.meta_graphs:
        ops |= {node.op for node in graph.graph_def.node}
        for function in graph.graph_def.library.function:
            functions.add(function.signature.name)
            ops |= {node.op for node in function.node_def}
    return ops - functions


def allowed_ops():
    """The allowlist kept in the repository (one op per line, # comments,
    also after an op: why it is there)."""
    lines = ALLOWLIST.read_text().splitlines()
    names = (line.split("#")[0].strip() for line in lines)
    return {name for name in names if name}


def disallowed_ops(export_path):
    """The ops of a SavedModel that are not on the allowlist."""
    return sorted(saved_model_ops(export_path) - allowed_ops())
