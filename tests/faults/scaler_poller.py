"""Polls warmpool-scaler's GetMetrics over real gRPC, as KEDA does, for the whole run.

Every sample brackets the RPC with two readings of kombu's `unacked_index` (tag -> delivery
time, on the driver's own connection). A delivery is the pair (tag, time): a pair in both
readings was in flight during the whole RPC, so the scaler, whose reading lies between the two,
must have counted it. The tag alone is not enough: a task restored to its queue (a SIGTERM gives
back what it had not started) and fetched again keeps its tag, and while it sat in the queue the
scaler rightly counted it as pending, not in flight; its new delivery has a new time. A
visibility extension also changes the time, which only leaves that task unjudged. Readings that
fail (Redis down) are None.
"""
import importlib
import os
import subprocess
import sys
import threading
import time

import grpc
import redis

from redis_ctl import client
from worker_pool import QUEUE

METADATA = {
    "queues": QUEUE,
    "countInFlight": "true",
    "tasksPerReplica": "1",
    "maxReplicas": "10000",
}


def load_proto(protoc, proto, out_dir):
    """Generates externalscaler_pb2 with protoc (messages only: no grpc_tools needed)."""
    subprocess.run([protoc, "--proto_path=" + os.path.dirname(proto), "--python_out=" + out_dir,
                    proto], check=True)
    sys.path.insert(0, out_dir)
    return importlib.import_module("externalscaler_pb2")


class Sample:
    __slots__ = ("t0", "t1", "code", "value", "before", "after")

    def __init__(self, t0, t1, code, value, before, after):
        self.t0, self.t1, self.code, self.value = t0, t1, code, value
        self.before, self.after = before, after

    @property
    def ok(self):
        return self.code == "OK"


class ScalerPoller(threading.Thread):
    def __init__(self, address, pb2, redis_port, interval=0.05, rpc_timeout=1.5):
        super().__init__(daemon=True)
        self.pb2 = pb2
        self.channel = grpc.insecure_channel(address)
        self.get_metrics = self.channel.unary_unary(
            "/externalscaler.ExternalScaler/GetMetrics",
            request_serializer=pb2.GetMetricsRequest.SerializeToString,
            response_deserializer=pb2.GetMetricsResponse.FromString)
        self.request = pb2.GetMetricsRequest(
            scaledObjectRef=pb2.ScaledObjectRef(name="faults", namespace="faults",
                                                scalerMetadata=METADATA))
        self.redis = client(redis_port, timeout=0.3)
        self.interval = interval
        self.rpc_timeout = rpc_timeout
        self.samples = []
        self.stop_event = threading.Event()

    def _unacked(self):
        try:
            return set(self.redis.zrange("unacked_index", 0, -1, withscores=True))
        except redis.RedisError:
            return None

    def call(self):
        before = self._unacked()
        t0 = time.monotonic()
        try:
            reply = self.get_metrics(self.request, timeout=self.rpc_timeout)
            code, value = "OK", reply.metricValues[0].metricValue
        except grpc.RpcError as e:
            code, value = e.code().name, None
        t1 = time.monotonic()
        sample = Sample(t0, t1, code, value, before, self._unacked())
        self.samples.append(sample)
        return sample

    def wait_ok(self, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.call().ok:
                return True
            time.sleep(0.1)
        return False

    def run(self):
        while not self.stop_event.is_set():
            self.call()
            self.stop_event.wait(self.interval)

    def stop(self):
        self.stop_event.set()
        self.join()
        self.channel.close()
