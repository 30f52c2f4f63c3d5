#!/usr/bin/env python3
"""A stand-in for the Kubernetes API server in the --pod-deletion-cost tests
(worker_pod_cost_test.cpp). Run with /usr/bin/python3; standard library only.

Listens on 127.0.0.1 (a free port, written to --port-file once it listens), appends every request
to --requests as one JSON line {method, path, authorization, content_type, body}, and answers with
the status read from --status-file at that moment: 200 when the file is absent, an HTTP code
(403 answers a Kubernetes Status object, as RBAC does), or "hang" to never answer.
"""
import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = None
lock = threading.Lock()


def answer_status():
    try:
        with open(args.status_file) as f:
            return f.read().strip() or "200"
    except FileNotFoundError:
        return "200"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_PATCH(self):
        self.record_and_answer()

    def do_GET(self):
        self.record_and_answer()

    def record_and_answer(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        record = {"method": self.command, "path": self.path,
                  "authorization": self.headers.get("Authorization"),
                  "content_type": self.headers.get("Content-Type"), "body": body}
        with lock, open(args.requests, "a") as f:
            f.write(json.dumps(record) + "\n")
        status = answer_status()
        if status == "hang":
            time.sleep(3600)
            return
        code = int(status)
        if code < 300:
            reply = {"kind": "Pod", "apiVersion": "v1", "metadata": json.loads(body or "{}").get(
                "metadata", {})}
        else:  # what the API server answers when RBAC lacks the verb
            reply = {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                     "reason": "Forbidden", "code": code,
                     "message": f'pods is forbidden: cannot {self.command.lower()} {self.path}'}
        data = json.dumps(reply).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *unused):
        pass


def main():
    global args
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--requests", required=True)
    ap.add_argument("--status-file", required=True)
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)  # the test never reads half a port number
    server.serve_forever()


if __name__ == "__main__":
    main()
