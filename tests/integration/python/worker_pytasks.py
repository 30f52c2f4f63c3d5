"""A Python Celery app for the interoperability tests: a real Celery 5.2.6 worker
(`python3 -m celery -A worker_pytasks worker -P solo`) that takes a message and is killed, and
the `warmpool.ping` task for the benchmark baseline. Broker and backend come from
CELERY_BROKER_URL / CELERY_RESULT_BACKEND."""
import os
import time

from celery import Celery

app = Celery("worker_pytasks", broker=os.environ.get("CELERY_BROKER_URL"),
             backend=os.environ.get("CELERY_RESULT_BACKEND"))
app.conf.task_acks_late = os.environ.get("WORKER_PYTASKS_ACKS_LATE", "1") == "1"
app.conf.worker_prefetch_multiplier = int(os.environ.get("WORKER_PYTASKS_PREFETCH", "1"))


@app.task(name="pytasks.slow")
def slow(seconds):
    time.sleep(seconds)
    return seconds


@app.task(name="warmpool.ping")
def ping():
    return "pong"
