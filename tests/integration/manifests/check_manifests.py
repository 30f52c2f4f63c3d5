#!/usr/bin/env python3
"""Checks rendered warmpool manifests for the properties KEDA and Kubernetes rely on.

check_manifests.sh renders base/, every overlay and overlay+component with `kubectl kustomize`
into --renders and then runs this. Every problem is reported (not just the first); exit 1 if any.
"""
import argparse
import base64
import glob
import os
import re
import sys
from urllib.parse import urlsplit

import yaml

import check_variants

# Keys warmpool-scaler understands (policy/scaler_metadata.cpp) and keys KEDA itself puts into
# scalerMetadata for external scalers (KEDA pkg/scalers/external_scaler.go). Anything else is a
# typo the scaler would only log once and ignore - found here instead of in the scaler's log.
SCALER_KEYS = {
    "redis", "redisAddress", "queues", "keyPrefix", "priorityLevels", "countInFlight",
    "tasksPerReplica", "activationBacklog", "minWarmReplicas", "maxReplicas", "keepAlive",
    "coldStartSeconds", "waitCostPerHour", "replicaCostPerHour", "nodeUnneededSeconds",
    "warmWindows", "drainSeconds", "taskSeconds", "prewarm", "etaPrewarm", "releasesPerHour",
}
KEDA_KEYS = {"scalerAddress", "enableTLS", "unsafeSsl"}
INT_KEYS = {"tasksPerReplica": 1, "activationBacklog": 0, "minWarmReplicas": 0, "maxReplicas": 1,
            "coldStartSeconds": 0, "nodeUnneededSeconds": 0}
BOOL_KEYS = {"countInFlight", "etaPrewarm", "enableTLS", "unsafeSsl"}
BOOL_VALUES = {"true", "false", "1", "0", "yes", "no"}

# Passwords that are obviously placeholders; anything else in a committed manifest is a leak.
PLACEHOLDER = re.compile(
    r"^(|change[-_]?me|changeme|placeholder|password|secret|example|x+|\*+|<[^>]*>|\$\{[^}]*\}|"
    r"\$\([^)]*\)|replace[-_]?me|your[-_].*|dummy)$", re.IGNORECASE)
SECRETISH_KEY = re.compile(r"pass(word)?|secret|token|api[-_]?key|credential", re.IGNORECASE)

errors = []


def fail(where, message):
    errors.append(f"{where}: {message}")


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def find(docs, kind, name=None):
    return [d for d in docs if d.get("kind") == kind
            and (name is None or d.get("metadata", {}).get("name") == name)]


def containers(deploy):
    return deploy.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []) or []


def pod_spec(deploy):
    return deploy.get("spec", {}).get("template", {}).get("spec", {}) or {}


def flag_value(args, flag, default=None):
    """Value of `--flag V` or `--flag=V` in a container's args (last one wins)."""
    value = default
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(flag + "="):
            value = a.split("=", 1)[1]
    return value


def resolve_port(container, port):
    """A probe/Service port given by name or number -> container port number."""
    if isinstance(port, int):
        return port
    if isinstance(port, str) and port.isdigit():
        return int(port)
    for p in container.get("ports", []) or []:
        if p.get("name") == port:
            return p.get("containerPort")
    return None


def password_problem(value):
    """Why `value` (a string from a Secret or env) looks like it holds a real password, or None."""
    for url in re.findall(r"rediss?://[^\s\"',]+", value):
        parts = urlsplit(url)
        if parts.password is not None and not PLACEHOLDER.match(parts.password):
            return f"URL {parts.scheme}://…@{parts.hostname} carries a real-looking password"
    return None


def check_secret_values(where, key, value):
    if not isinstance(value, str):
        return
    why = password_problem(value)
    if why:
        fail(where, f"key {key!r}: {why}")
    elif SECRETISH_KEY.search(key) and not PLACEHOLDER.match(value.strip()):
        fail(where, f"key {key!r} holds a real-looking secret value")


def check_secrets(where, docs):
    for s in find(docs, "Secret"):
        name = s["metadata"].get("name")
        for k, v in (s.get("stringData") or {}).items():
            check_secret_values(f"{where} Secret/{name}", k, v)
        for k, v in (s.get("data") or {}).items():
            try:
                decoded = base64.b64decode(v).decode("utf-8", "replace")
            except Exception:  # not base64: the API server would reject it anyway
                fail(f"{where} Secret/{name}", f"data.{k} is not base64")
                continue
            check_secret_values(f"{where} Secret/{name}", k, decoded)
    # Credentials must not hide in plain env values or ScaledObject metadata either.
    for d in docs:
        if d.get("kind") in ("Deployment", "StatefulSet", "DaemonSet"):
            for c in containers(d):
                for e in c.get("env", []) or []:
                    if isinstance(e.get("value"), str) and password_problem(e["value"]):
                        fail(f"{where} {d['kind']}/{d['metadata']['name']}",
                             f"env {e['name']} has a password in plain text; use secretKeyRef")
        if d.get("kind") == "ScaledObject":
            for t in d.get("spec", {}).get("triggers", []) or []:
                for k, v in (t.get("metadata") or {}).items():
                    if isinstance(v, str) and ("@" in v and "://" in v or password_problem(v)):
                        fail(f"{where} ScaledObject/{d['metadata']['name']}",
                             f"metadata.{k} carries credentials; KEDA shows metadata to anyone "
                             "who can read ScaledObjects - use a named `redis` connection")


def check_overlay(name, docs, source_text):
    where = f"overlay {name}"
    if find(docs, "ScaledJob"):
        return check_variants.check_scaledjob_overlay(name, docs, SCALER_KEYS, fail)
    sos = find(docs, "ScaledObject")
    if len(sos) != 1:
        fail(where, f"expected 1 ScaledObject, found {len(sos)}")
        return
    so = sos[0]
    spec = so.get("spec", {})
    so_ns = so["metadata"].get("namespace")
    sow = f"{where} ScaledObject/{so['metadata']['name']}"
    if not so_ns:
        fail(sow, "no namespace: the overlay must set `namespace:`")

    # --- target ---------------------------------------------------------------------------------
    ref = spec.get("scaleTargetRef", {})
    targets = find(docs, ref.get("kind", "Deployment"), ref.get("name"))
    if not targets:
        fail(sow, f"scaleTargetRef {ref} names no object in the render")
        return
    worker = targets[0]

    # --- KEDA knobs -----------------------------------------------------------------------------
    if spec.get("idleReplicaCount") not in (None, 0):
        fail(sow, "idleReplicaCount must be 0 or absent (other values flap, kedacore/keda#2314)")
    if spec.get("pollingInterval", 30) > 30:
        fail(sow, f"pollingInterval {spec.get('pollingInterval')} > 30 s: slow scale-up past 1")
    if spec.get("cooldownPeriod", 300) > 120:
        fail(sow, f"cooldownPeriod {spec.get('cooldownPeriod', 300)} > 120 s: the policy's "
                  "keepAlive already is the idle timer; a long cooldown pays for idle GPUs")
    behavior = (spec.get("advanced", {}).get("horizontalPodAutoscalerConfig", {})
                .get("behavior", {}))
    window = behavior.get("scaleDown", {}).get("stabilizationWindowSeconds", 300)
    if window < 120:
        fail(sow, f"HPA scaleDown.stabilizationWindowSeconds={window}: keep >= 120 (default 300); "
                  "warmpool-sim measured 30 s at +8 % GPU-h and 50x the reversals on W3 "
                  "(docs/SCALING.md)")

    triggers = spec.get("triggers", []) or []
    push = [t for t in triggers if t.get("type") == "external-push"]
    if len(push) != 1:
        fail(sow, f"expected exactly one trigger of type external-push, found "
                  f"{[t.get('type') for t in triggers]}")
        return
    trig = push[0]
    if trig.get("metricType", "AverageValue") != "AverageValue":
        fail(sow, f"metricType {trig['metricType']!r}: the metric is the desired replica count "
                  "with target 1, so only AverageValue (the default) gives ceil(value/1)")
    md = trig.get("metadata") or {}

    # Every value must be a string (KEDA: map[string]string; the CRD rejects numbers/booleans).
    for k, v in md.items():
        if not isinstance(v, str):
            fail(sow, f"metadata.{k}={v!r} is a {type(v).__name__}; quote it (KEDA metadata "
                      "values are strings)")
    for k in md:
        if k in KEDA_KEYS:
            continue
        # KEDA resolves xFromEnv and sends it under its own name; the scaler reads it as x
        # (policy/metadata_keys.cpp), so x must be a key the scaler knows.
        base = k[:-len("FromEnv")] if len(k) > 7 and k.endswith("FromEnv") else k
        if base in KEDA_KEYS:
            continue
        if base not in SCALER_KEYS:
            fail(sow, f"metadata key {k!r} is not a warmpool-scaler key (known: "
                      f"{', '.join(sorted(SCALER_KEYS))})")
        elif source_text is not None and f'"{base}"' not in source_text:
            fail(sow, f"metadata key {base!r} no longer appears in policy/scaler_metadata.cpp")
    for k, lo in INT_KEYS.items():
        v = md.get(k)
        if isinstance(v, str) and (not re.fullmatch(r"-?\d+", v) or int(v) < lo):
            fail(sow, f"metadata.{k}={v!r}: must be an integer >= {lo}")
    for k in BOOL_KEYS:
        v = md.get(k)
        if isinstance(v, str) and v.lower() not in BOOL_VALUES:
            fail(sow, f"metadata.{k}={v!r}: must be true or false")
    ka = md.get("keepAlive")
    if isinstance(ka, str) and ka != "auto" and not ka.isdigit():
        fail(sow, f"metadata.keepAlive={ka!r}: auto or seconds")
    if "redis" in md and "redisAddress" in md:
        fail(sow, "give either redis or redisAddress, not both")
    if isinstance(md.get("maxReplicas"), str) and md["maxReplicas"].isdigit():
        if int(md["maxReplicas"]) > spec.get("maxReplicaCount", 100):
            fail(sow, f"metadata.maxReplicas {md['maxReplicas']} > maxReplicaCount "
                      f"{spec.get('maxReplicaCount', 100)}: the HPA would clamp the policy")

    # --- scalerAddress -> headless Service -> scaler pods ----------------------------------------
    addr = md.get("scalerAddress", "")
    m = re.fullmatch(r"([a-z0-9-]+)\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?:(\d+)", str(addr))
    if not m:
        fail(sow, f"scalerAddress {addr!r} is not <service>.<namespace>.svc:<port> (KEDA runs in "
                  "its own namespace, so the name must be namespace-qualified)")
        return
    svc_name, svc_ns, svc_port = m.group(1), m.group(2), int(m.group(3))
    svcs = [s for s in find(docs, "Service", svc_name)
            if s["metadata"].get("namespace") == svc_ns]
    if not svcs:
        fail(sow, f"scalerAddress {addr}: no Service {svc_name} in namespace {svc_ns} "
                  f"(the Service is in {[s['metadata'].get('namespace') for s in find(docs, 'Service', svc_name)]})")
        return
    svc = svcs[0]
    svw = f"{where} Service/{svc_name}"
    ports = [p for p in svc["spec"].get("ports", []) if p.get("port") == svc_port]
    if not ports:
        fail(svw, f"has no port {svc_port} (scalerAddress {addr})")
        return
    if svc["spec"].get("clusterIP") != "None":
        fail(svw, "should be headless (clusterIP: None) so KEDA's round_robin spreads calls")
    selector = svc["spec"].get("selector") or {}
    scalers = [d for d in find(docs, "Deployment")
               if selector and all(d["spec"]["template"]["metadata"].get("labels", {}).get(k) == v
                                   for k, v in selector.items())]
    if len(scalers) != 1:
        fail(svw, f"selector {selector} matches {len(scalers)} Deployments, expected the scaler")
        return
    scaler = scalers[0]
    sc = containers(scaler)[0]
    scw = f"{where} Deployment/{scaler['metadata']['name']}"
    target = resolve_port(sc, ports[0].get("targetPort", svc_port))
    listen = flag_value(sc.get("args", []) or [], "--listen", "0.0.0.0:6000")
    listen_port = int(str(listen).rsplit(":", 1)[1])
    if target != listen_port:
        fail(scw, f"Service port {svc_port} -> container port {target}, but the scaler "
                  f"listens on {listen_port}")
    for probe, service in (("livenessProbe", "liveness"), ("readinessProbe", "readiness")):
        g = (sc.get(probe) or {}).get("grpc")
        if not g:
            fail(scw, f"{probe} must be a native grpc probe (grpc.health.v1 service {service!r})")
            continue
        if g.get("service") != service:
            fail(scw, f"{probe}.grpc.service={g.get('service')!r}, expected {service!r}")
        if resolve_port(sc, g.get("port")) != check_variants.probe_port(sc, listen_port):
            fail(scw, f"{probe}.grpc.port={g.get('port')} but the scaler serves health on "
                      f"{check_variants.probe_port(sc, listen_port)}")
    check_variants.check_tls(sow, docs, so, trig, scaler, fail)
    env = {e["name"]: e for e in sc.get("env", []) or []}
    if "WARMPOOL_REDIS" not in env and not any(a.startswith("--redis") for a in sc.get("args", [])):
        fail(scw, "no WARMPOOL_REDIS env or --redis flag: the connection named in metadata "
                  f"(redis={md.get('redis', 'default')}) would be 127.0.0.1")
    elif "WARMPOOL_REDIS" in env:
        conn = md.get("redis", "default")
        if "redisAddress" not in md and not re.search(
                rf"(^|,){re.escape(conn)}=", env["WARMPOOL_REDIS"].get("value", "")):
            fail(scw, f"WARMPOOL_REDIS does not define the connection {conn!r} used by the "
                      "ScaledObject")
    psc = pod_spec(scaler).get("securityContext", {}) or {}
    csc = sc.get("securityContext", {}) or {}
    if not (psc.get("runAsNonRoot") or csc.get("runAsNonRoot")):
        fail(scw, "must run as non-root")
    if not csc.get("readOnlyRootFilesystem"):
        fail(scw, "must have readOnlyRootFilesystem: true")

    # --- worker ---------------------------------------------------------------------------------
    ww = f"{where} Deployment/{worker['metadata']['name']}"
    wc = containers(worker)[0]
    wargs = [str(a) for a in wc.get("args", []) or []]
    grace = float(flag_value(wargs, "--grace-seconds", "30"))
    tgps = pod_spec(worker).get("terminationGracePeriodSeconds", 30)
    if not tgps > grace:
        fail(ww, f"terminationGracePeriodSeconds {tgps} must exceed --grace-seconds {grace:g}, "
                 "else the kubelet SIGKILLs a draining task before it is requeued")
    if worker["spec"].get("replicas") not in (None, 0):
        fail(ww, f"replicas {worker['spec']['replicas']}: KEDA/HPA own the count; use 0 or omit")
    wqueues = flag_value(wargs, "-Q", None) or flag_value(wargs, "--queues", "celery")
    if set(wqueues.split(",")) != set(str(md.get("queues", "celery")).split(",")):
        fail(ww, f"worker consumes -Q {wqueues} but the ScaledObject measures queues="
                 f"{md.get('queues', 'celery')}")
    conc = flag_value(wargs, "-c", None) or flag_value(wargs, "--concurrency", "1")
    if str(md.get("tasksPerReplica", "1")) != str(conc):
        fail(ww, f"worker -c {conc} but tasksPerReplica={md.get('tasksPerReplica', '1')}")
    health = flag_value(wargs, "--health-listen", "off")
    if health == "off":
        fail(ww, "--health-listen is off: the probes have nothing to call")
    else:
        hport = int(health.rsplit(":", 1)[1])
        for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
            h = (wc.get(probe) or {}).get("httpGet")
            if not h or h.get("path") != path or resolve_port(wc, h.get("port")) != hport:
                fail(ww, f"{probe} must be httpGet {path} on the health port {hport}, got {h}")
    wenv = {e["name"]: e for e in wc.get("env", []) or []}
    broker = wenv.get("CELERY_BROKER_URL", {}).get("valueFrom", {}).get("secretKeyRef")
    if not broker:
        fail(ww, "CELERY_BROKER_URL must come from a Secret (secretKeyRef)")
    elif "WARMPOOL_REDIS" in env:
        # The scaler must measure the Redis the worker consumes: same Secret and key.
        refs = [e.get("valueFrom", {}).get("secretKeyRef") for e in sc.get("env", []) or []]
        if not any(r and r.get("name") == broker.get("name") and r.get("key") == broker.get("key")
                   for r in refs):
            fail(scw, f"the scaler's Redis URL does not come from the worker's broker Secret "
                      f"{broker.get('name')}/{broker.get('key')}")
    return worker, scaler


def token_mounted(docs, pod):
    """Whether the pod gets an API token: its automountServiceAccountToken, else its account's."""
    if "automountServiceAccountToken" in pod:
        return bool(pod["automountServiceAccountToken"])
    accounts = find(docs, "ServiceAccount", pod.get("serviceAccountName", "default"))
    return not accounts or accounts[0].get("automountServiceAccountToken", True) is not False


def env_field(container, name):
    """The downward-API fieldPath an env variable comes from, or None."""
    for e in container.get("env", []) or []:
        if e.get("name") == name:
            return ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
    return None


def check_api_access(where, docs, worker, scaler):
    """Least privilege: the scaler gets no token; the worker one only for --pod-deletion-cost,
    which PATCHes its own pod (docs/worker.md) and needs get/patch on pods, nothing more."""
    if token_mounted(docs, pod_spec(scaler)):
        fail(f"{where} Deployment/{scaler['metadata']['name']}",
             "the scaler never calls the Kubernetes API: "
             "automountServiceAccountToken must be false")
    for kind in ("ClusterRole", "ClusterRoleBinding"):
        for d in find(docs, kind):
            fail(f"{where} {kind}/{d['metadata']['name']}", "warmpool needs no cluster-wide access")
    for role in find(docs, "Role"):
        for rule in role.get("rules", []) or []:
            if (rule.get("apiGroups") != [""] or rule.get("resources") != ["pods"]
                    or not set(rule.get("verbs", [])) <= {"get", "patch"}):
                fail(f"{where} Role/{role['metadata']['name']}",
                     f"rule {rule} grants more than get/patch on pods")
    ww = f"{where} Deployment/{worker['metadata']['name']}"
    wc, pod = containers(worker)[0], pod_spec(worker)
    if "--pod-deletion-cost" not in [str(a) for a in wc.get("args", []) or []]:
        if token_mounted(docs, pod):
            fail(ww, "a token is mounted but --pod-deletion-cost is off: nothing uses it")
        return
    if not token_mounted(docs, pod):
        fail(ww, "--pod-deletion-cost needs the service account token: "
                 "automountServiceAccountToken: true")
    for var, path in (("POD_NAME", "metadata.name"), ("POD_NAMESPACE", "metadata.namespace")):
        if env_field(wc, var) != path:
            fail(ww, f"--pod-deletion-cost needs env {var} from fieldRef {path}")
    account = pod.get("serviceAccountName", "default")
    ns = worker["metadata"].get("namespace")
    roles = {r["metadata"]["name"] for r in find(docs, "Role")
             if any("patch" in rule.get("verbs", []) for rule in r.get("rules", []) or [])}
    if not any(b.get("roleRef", {}).get("kind") == "Role" and b["roleRef"].get("name") in roles
               and any(s.get("kind") == "ServiceAccount" and s.get("name") == account
                       and s.get("namespace") == ns for s in b.get("subjects", []) or [])
               for b in find(docs, "RoleBinding")):
        fail(ww, f"--pod-deletion-cost: no RoleBinding gives ServiceAccount {account} in {ns} a "
                 "Role with patch on pods (the API server would answer 403)")


def pod_templates(docs):
    """(kind/name, pod spec) of every workload's pod template, a ScaledJob's Job's included."""
    out = []
    for d in docs:
        # A ScaledJob holds its Job spec under jobTargetRef, where a Deployment holds its own.
        holder = {"spec": (d.get("spec", {}) or {}).get("jobTargetRef", {}) or {}} \
            if d.get("kind") == "ScaledJob" else d
        if pod := pod_spec(holder):
            out.append((f"{d['kind']}/{d['metadata']['name']}", pod))
    return out


def check_unused_access(where, docs):
    """A RoleBinding to an account that no pod mounts a token of grants access nobody needs (the
    ScaledJob overlay drops the worker's Role with the Deployment)."""
    users = {p.get("serviceAccountName", "default") for _, p in pod_templates(docs)
             if token_mounted(docs, p)}
    for b in find(docs, "RoleBinding"):
        for s in b.get("subjects", []) or []:
            if s.get("kind") == "ServiceAccount" and s.get("name") not in users:
                fail(f"{where} RoleBinding/{b['metadata']['name']}",
                     f"binds ServiceAccount {s.get('name')}, which no pod with a token uses")


def gpu_limit(container):
    return (container.get("resources", {}) or {}).get("limits", {}).get("nvidia.com/gpu")


def check_aks(docs, worker, scaler):
    where = "overlay aks"
    ps = pod_spec(worker)
    tol = ps.get("tolerations", []) or []
    if not any(t.get("key") == "sku" and t.get("effect") in (None, "NoSchedule")
               and (t.get("operator") == "Exists"
                    or (t.get("operator", "Equal") == "Equal" and t.get("value") == "gpu"))
               for t in tol):
        fail(where, "worker does not tolerate the AKS GPU taint sku=gpu:NoSchedule")
    if (ps.get("nodeSelector") or {}).get("kubernetes.azure.com/accelerator") != "nvidia":
        fail(where, "worker nodeSelector lacks kubernetes.azure.com/accelerator: nvidia")
    if str(gpu_limit(containers(worker)[0])) not in ("1", "2", "4", "8"):
        fail(where, f"worker must request nvidia.com/gpu, limits: {gpu_limit(containers(worker)[0])}")
    if any(t.get("key") in ("sku", "nvidia.com/gpu") for t in pod_spec(scaler).get("tolerations", []) or []):
        fail(where, "the scaler tolerates the GPU taint: it could keep a GPU node alive")
    if scaler["spec"].get("replicas", 1) < 2:
        fail(where, "scaler replicas < 2: KEDA stalls while the only scaler restarts")
    for d in find(docs, "Deployment"):
        for c in containers(d):
            if "/" not in c.get("image", "") :
                fail(where, f"{d['metadata']['name']}: image {c.get('image')!r} has no registry")


def check_local(worker):
    if gpu_limit(containers(worker)[0]) is not None:
        fail("overlay local", "CPU-only overlay still requests nvidia.com/gpu (pod would stay Pending)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifests", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--renders", required=True)
    ap.add_argument("overlays", nargs="+")
    a = ap.parse_args()

    src = os.path.join(a.source_root, "policy", "scaler_metadata.cpp")
    source_text = open(src).read() if os.path.exists(src) else None

    # Every YAML file in the tree, including templates no kustomization lists (secret.example.yaml).
    for path in sorted(glob.glob(os.path.join(a.manifests, "**", "*.yaml"), recursive=True)):
        try:
            check_secrets(os.path.relpath(path, a.manifests), load(path))
        except yaml.YAMLError as e:
            fail(os.path.relpath(path, a.manifests), f"invalid YAML: {e}")

    for render in sorted(glob.glob(os.path.join(a.renders, "*.yaml"))):
        docs = load(render)
        check_secrets(os.path.basename(render), docs)
        for d in docs:
            for k, v in ((d.get("metadata") or {}).get("labels") or {}).items():
                if not isinstance(v, str):
                    fail(os.path.basename(render), f"{d['kind']}/{d['metadata']['name']} label {k} not a string")

    for name in a.overlays:
        docs = load(os.path.join(a.renders, f"overlay-{name}.yaml"))
        result = check_overlay(name, docs, source_text)
        check_unused_access(f"overlay {name}", docs)
        if not result:
            continue
        worker, scaler = result
        check_api_access(f"overlay {name}", docs, worker, scaler)
        if name == "aks":
            check_aks(docs, worker, scaler)
        if name == "local":
            check_local(worker)
        if name == "tls" and str((find(docs, "ScaledObject")[0]["spec"]["triggers"][0]
                                  .get("metadata") or {}).get("enableTLS")).lower() != "true":
            fail("overlay tls", "the TLS overlay does not set enableTLS: \"true\"")
        print(f"checked overlay {name}")

    if errors:
        print(f"\n{len(errors)} problem(s):")
        for e in errors:
            print("  FAIL " + e)
        return 1
    print("manifests OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
