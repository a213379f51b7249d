"""`tf.distribute` strategies for the training loop.

Keras 3's `model.fit` cannot train under `MultiWorkerMirroredStrategy`
(keras-team/keras#20585), so the package trains with its own `tf.function`
step under the strategy. Every worker reads the same, identically shuffled
batches; each replica takes every n-th sentence of a batch (n = replicas in
sync), so that the data iterator stays an ordinary, checkpointable one.
"""

import json
import os

import tensorflow as tf


def split_cpu(num_devices):
    """Splits the CPU into `num_devices` logical devices (before TF starts)."""
    if num_devices < 2:
        return
    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * num_devices
        )
    except RuntimeError as error:
        raise RuntimeError(
            "num_cpu_devices must be set before TensorFlow starts running ops"
        ) from error


def make_strategy(name, num_cpu_devices=0):
    """The strategy called `name`: "default", "mirrored" or "multi_worker".

    "mirrored" uses every GPU, or else the logical CPU devices (set
    `num_cpu_devices` to split the CPU). "multi_worker" reads the cluster from
    the `TF_CONFIG` environment variable.
    """
    if num_cpu_devices:
        split_cpu(num_cpu_devices)
    if name == "default":
        return tf.distribute.get_strategy()
    if name == "mirrored":
        devices = [d.name for d in tf.config.list_logical_devices("GPU")]
        if not devices:
            devices = [d.name for d in tf.config.list_logical_devices("CPU")]
        return tf.distribute.MirroredStrategy(devices)
    if name == "multi_worker":
        if "TF_CONFIG" not in os.environ:
            raise ValueError(
                "strategy 'multi_worker' needs TF_CONFIG to be set"
            )
        return tf.distribute.MultiWorkerMirroredStrategy()
    raise ValueError(f"unknown strategy {name!r}")


def worker_index():
    """This process's worker index in TF_CONFIG (0 without one)."""
    config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    return int(config.get("task", {}).get("index", 0))


def is_chief():
    """Whether this process writes the model directory (worker 0)."""
    config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    task = config.get("task", {})
    return task.get("type", "worker") in ("worker", "chief") and (
        task.get("type") == "chief" or int(task.get("index", 0)) == 0
    )


def replica_shard(batch):
    """This replica's rows of a global batch: every n-th, from its id."""
    context = tf.distribute.get_replica_context()
    replicas = context.num_replicas_in_sync
    if replicas == 1:
        return batch
    index = context.replica_id_in_sync_group
    return tf.nest.map_structure(lambda x: x[index::replicas], batch)
