"""A redis-server of the fault suite's own: loopback, free port, AOF on, own directory, and
restartable on the same port and data (a Redis pod restart)."""
import os
import signal
import socket
import subprocess
import time

import redis


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def client(port, timeout=0.5):
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=timeout,
                       socket_connect_timeout=timeout)


class RedisServer:
    def __init__(self, workdir, port):
        self.dir = os.path.join(workdir, "redis")
        os.makedirs(self.dir, exist_ok=True)
        self.port = port
        self.proc = None
        self.starts = 0

    @property
    def url(self):
        return "redis://127.0.0.1:%d/0" % self.port

    def start(self, timeout=10.0):
        """Starts redis-server and returns the monotonic time it first answered PING."""
        self.starts += 1
        log = open(os.path.join(self.dir, "redis.%d.log" % self.starts), "wb")
        # appendonly yes: a restart reloads every write; SIGTERM makes Redis fsync the AOF first.
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
             "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
             "--daemonize", "no"],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        c = client(self.port, timeout=0.2)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("redis-server exited with %s" % self.proc.returncode)
            try:
                if c.ping():  # also fails while the AOF loads (LOADING)
                    return time.monotonic()
            except redis.RedisError:
                pass
            time.sleep(0.01)
        raise RuntimeError("redis-server did not answer PING within %.0f s" % timeout)

    def stop(self, timeout=20.0):
        """SIGTERM (graceful: AOF flushed) and waits for the exit. Returns the monotonic times of
        the signal and of the exit (from then on nothing listens on the port)."""
        t_stop = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=timeout)
        return t_stop, time.monotonic()

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
