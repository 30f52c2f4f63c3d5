#!/usr/bin/env python3
"""Fails when warmpool-sim's warmpool row drifts from what manifests/base ships.

Runs `warmpool-sim run --policies warmpool --format json` on a one-task workload and compares the
row's `deployedWith` (the settings it was simulated with, sim/shipped_settings.h) with
manifests/base/scaledobject.yaml and worker-deployment.yaml. Exit 0 ok, 1 drift, 77 no PyYAML.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIP: python3 with PyYAML not found (Debian package: python3-yaml)")
    sys.exit(77)

# Trigger metadata the simulator does not use (connection and queue layout) or sizes to the
# simulated cluster for every policy alike (maxReplicas, like maxReplicaCount).
NOT_SIMULATED = {"scalerAddress", "redis", "redisAddress", "queues", "keyPrefix",
                 "priorityLevels", "maxReplicas", "enableTLS", "unsafeSsl"}
VISIBILITY_DEFAULT = "3600"  # kombu's Redis transport visibility_timeout = worker default

errors = []


def expect(what, shipped, simulated):
    if str(shipped) != str(simulated):
        errors.append(f"{what}: manifests/base ships {shipped!r}, warmpool-sim simulates "
                      f"{simulated!r} (update sim/shipped_settings.h)")


def load_one(path, kind):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == kind]
    if len(docs) != 1:
        sys.exit(f"FAIL: {path}: want one {kind}, found {len(docs)}")
    return docs[0]


def arg_value(args, flag, default=None):
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return default


def simulated_settings(sim):
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "one.csv")
        with open(csv, "w") as f:
            f.write("arrival_s,duration_s\n10,5\n")
        out = subprocess.run([sim, "run", "--workload", csv, "--policies", "warmpool",
                              "--format", "json"], check=True, capture_output=True, text=True,
                             timeout=60).stdout
    return json.loads(out)["policies"][0]["deployedWith"]


def check_behavior(behavior, sim):
    down, up = behavior.get("scaleDown", {}), behavior.get("scaleUp", {})
    expect("scaleDown.stabilizationWindowSeconds", down.get("stabilizationWindowSeconds", 300),
           sim["scaleDown.stabilizationWindowSeconds"])
    expect("scaleUp.stabilizationWindowSeconds", up.get("stabilizationWindowSeconds", 0),
           sim["scaleUp.stabilizationWindowSeconds"])
    expect("scaleUp.selectPolicy (the model takes Max)", up.get("selectPolicy", "Max"), "Max")
    for side, rules, allowed in (("scaleDown", down, {"Percent"}),
                                 ("scaleUp", up, {"Percent", "Pods"})):
        for rule in rules.get("policies", []):
            kind = rule["type"]
            if kind not in allowed:
                errors.append(f"{side} policy type {kind}: not modelled by warmpool-sim")
                continue
            expect(f"{side} {kind} value", rule["value"], sim[f"{side}.{kind.lower()}"])
            expect(f"{side} {kind} periodSeconds", rule["periodSeconds"], sim["periodSeconds"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifests", required=True)
    ap.add_argument("--sim", required=True)
    a = ap.parse_args()
    base = os.path.join(a.manifests, "base")
    so = load_one(os.path.join(base, "scaledobject.yaml"), "ScaledObject")["spec"]
    deploy = load_one(os.path.join(base, "worker-deployment.yaml"), "Deployment")
    sim = simulated_settings(a.sim)

    for key in ("pollingInterval", "cooldownPeriod", "initialCooldownPeriod", "minReplicaCount"):
        expect(key, so.get(key, "(unset)"), sim.get(key))
    behavior = so.get("advanced", {}).get("horizontalPodAutoscalerConfig", {}).get("behavior", {})
    check_behavior(behavior, sim)
    triggers = so.get("triggers", [])
    if len(triggers) != 1:
        errors.append(f"want one trigger, found {len(triggers)}")
    else:
        expect("trigger type", triggers[0]["type"], sim["triggerType"])
        meta = {k: str(v) for k, v in triggers[0].get("metadata", {}).items()}
        simulated = {k[len("metadata."):]: v for k, v in sim.items() if k.startswith("metadata.")}
        for key in sorted((set(meta) | set(simulated)) - NOT_SIMULATED):
            expect(f"metadata.{key}", meta.get(key, "(unset)"), simulated.get(key, "(unset)"))

    pod = deploy["spec"]["template"]["spec"]
    expect("terminationGracePeriodSeconds", pod.get("terminationGracePeriodSeconds", 30),
           sim["terminationGracePeriodSeconds"])
    args = [str(x) for x in pod["containers"][0].get("args", [])]
    expect("worker --grace-seconds", arg_value(args, "--grace-seconds", "30"),
           sim.get("graceSeconds"))
    expect("worker --visibility-timeout", arg_value(args, "--visibility-timeout",
                                                    VISIBILITY_DEFAULT),
           sim["visibilityTimeoutSeconds"])
    expect("worker --pod-deletion-cost", "true" if "--pod-deletion-cost" in args else "false",
           sim.get("podDeletionCost"))

    for e in errors:
        print("FAIL:", e)
    print(f"checked {len(sim)} simulated settings against manifests/base: "
          f"{'drift' if errors else 'ok'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
