"""`tf.distribute` strategies for the training loop.

Keras 3's `model.fit` cannot train under `MultiWorkerMirroredStrategy`
(keras-team/keras#20585), so the package trains with its own `tf.function`
step under the strategy. Every worker reads its own share of the pairs
(`data.training_data` shards them) into batches of `batch_size / workers`;
each of its replicas takes every n-th sentence of that batch (n = its
replicas), so that the data iterator stays an ordinary, checkpointable one.
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


def num_workers():
    """The workers (chief included) in TF_CONFIG's cluster (1 without)."""
    cluster = json.loads(os.environ.get("TF_CONFIG", "{}")).get("cluster", {})
    return max(
        1, len(cluster.get("worker", [])) + len(cluster.get("chief", []))
    )


def shard_index():
    """This process's share of the data, 0 to `num_workers() - 1`: the
    chief's is 0."""
    config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    task = config.get("task", {})
    if task.get("type") == "chief":
        return 0
    return worker_index() + len(config.get("cluster", {}).get("chief", []))


def replica_shard(batch):
    """This replica's rows of its worker's batch: every n-th, from its index
    among the worker's n replicas (replica ids run worker by worker)."""
    context = tf.distribute.get_replica_context()
    replicas = context.num_replicas_in_sync // num_workers()
    if replicas <= 1:
        return batch
    index = context.replica_id_in_sync_group % replicas
    return tf.nest.map_structure(lambda x: x[index::replicas], batch)
