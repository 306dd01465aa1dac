"""A kubectl stand-in for the restore runbook's tests: a directory stands for the cluster, and `exec`
runs the command on this machine against the test's real servers.

KUBE_CLUSTER names the directory:

- `cluster.json`: `workloads` {"NS/KIND/NAME": {"replicas": N}} (what `scale`/`rollout` may name),
  `pods` {"NS/POD": {"programs": {"mariadb": [argv prefix...]}, "env": {...}}} (a pod whose programs
  are mapped onto local ones, e.g. `mariadb` onto the client with the test server's connection flags;
  `statefulset/NAME` names a pod too), `rewrite` {"text in an argument": "replacement"} (cluster DNS
  names onto the test servers' addresses);
- `secrets/NS/NAME.json` and `configmaps/NS/NAME.json`: objects as the API returns them;
- `volumes/NS/CLAIM/`: a PersistentVolumeClaim's files.

An applied Pod is kept under `pods/NS/NAME.json`; `exec` into it runs the command locally with its
mount paths (claims, ConfigMaps, Secrets) put onto those directories (ConfigMaps and Secrets written out
under `mounts/`), its `env` (with `secretKeyRef`) set, and stdin passed only with `-i`, as kubectl does.
Every call is appended to `calls.jsonl`, every applied object to `applied.jsonl`. With KUBE_HOOK_URL set,
`scale` POSTs {"workload": "NS/KIND/NAME", "replicas": N} there and returns once it is answered: the test
stops or starts the real daemon that the workload stands for; `delete pod NAME` of a pod in `pods` POSTs
{"workload": "NS/pod/NAME", "replicas": 1} (its StatefulSet re-creates it: the test restarts the daemon).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, NoReturn

import yaml

ROOT = Path(os.environ["KUBE_CLUSTER"])


def fail(message: str) -> NoReturn:
    sys.stderr.write(f"error: {message}\n")
    sys.exit(1)


def cluster() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "cluster.json").read_text())
    return data


def save_cluster(data: dict[str, Any]) -> None:
    (ROOT / "cluster.json").write_text(json.dumps(data, indent=1))


def record(name: str, item: dict[str, Any]) -> None:
    with (ROOT / name).open("a") as handle:
        handle.write(json.dumps(item) + "\n")


def read_object(kind: str, namespace: str, name: str) -> dict[str, Any]:
    path = ROOT / kind / namespace / f"{name}.json"
    if not path.exists():
        fail(f'{kind[:-1]}s "{name}" not found in namespace "{namespace}"')
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def parse(argv: list[str]) -> tuple[str, list[str], list[str]]:
    """(namespace, arguments before `--`, command after `--`)."""
    namespace, rest, command = "default", [], []
    if "--" in argv:
        command = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    i = 0
    while i < len(argv):
        if argv[i] in ("-n", "--namespace"):
            namespace = argv[i + 1]
            i += 2
            continue
        if argv[i].startswith("--namespace="):
            namespace = argv[i].split("=", 1)[1]
        else:
            rest.append(argv[i])
        i += 1
    return namespace, rest, command


def jsonpath_data(obj: dict[str, Any], expression: str) -> str:
    expression = expression.strip("'")
    if not (expression.startswith("{.data.") and expression.endswith("}")):
        fail(f"this stand-in reads only {{.data.KEY}}, not {expression}")
    key = expression[len("{.data.") : -1].replace("\\.", ".")
    value: str = obj.get("data", {}).get(key, "")
    return value


def get(namespace: str, args: list[str]) -> None:
    if args[:1] != ["secret"] or len(args) < 2:
        fail(f"this stand-in gets only Secrets, not {args}")
    secret = read_object("secrets", namespace, args[1])
    output = next((a.split("=", 1)[1] for a in args if a.startswith("-o=")), None)
    if "-o" in args:
        output = args[args.index("-o") + 1]
    if output and output.startswith("jsonpath="):
        sys.stdout.write(jsonpath_data(secret, output[len("jsonpath=") :]))
    else:
        sys.stdout.write(json.dumps(secret))


def apply(namespace: str, args: list[str]) -> None:
    source = args[args.index("-f") + 1]
    text = sys.stdin.read() if source == "-" else Path(source).read_text()
    for document in yaml.safe_load_all(text):
        if not document:
            continue
        for obj in document.get("items", []) if document.get("kind") == "List" else [document]:
            meta = obj.setdefault("metadata", {})
            ns = meta.setdefault("namespace", namespace)
            record("applied.jsonl", obj)
            folder = {"Secret": "secrets", "Pod": "pods", "ConfigMap": "configmaps"}.get(obj["kind"])
            if folder is None:
                fail(f"this stand-in applies Secrets, ConfigMaps and Pods, not {obj['kind']}")
            (ROOT / folder / ns).mkdir(parents=True, exist_ok=True)
            (ROOT / folder / ns / f"{meta['name']}.json").write_text(json.dumps(obj))
            print(f"{obj['kind'].lower()}/{meta['name']} configured")


def workload(namespace: str, args: list[str]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    names = [a for a in args if not a.startswith("-")]
    ref = names[0] if "/" in names[0] else f"{names[0]}/{names[1]}"
    kind, name = ref.split("/", 1)
    kind = {"deploy": "deployment", "sts": "statefulset"}.get(kind, kind)
    data = cluster()
    key = f"{namespace}/{kind}/{name}"
    if key not in data["workloads"]:
        fail(f'{kind}s.apps "{name}" not found in namespace "{namespace}"')
    return key, data, data["workloads"][key]


def scale(namespace: str, args: list[str]) -> None:
    replicas = int(next(a.split("=", 1)[1] for a in args if a.startswith("--replicas=")))
    key, data, item = workload(namespace, [a for a in args if not a.startswith("--")])
    item["replicas"] = replicas
    save_cluster(data)
    notify(key, replicas, "scaling")
    print(f"{key} scaled")


def notify(key: str, replicas: int, doing: str) -> None:
    """With KUBE_HOOK_URL set: the test stops, starts or restarts the real daemon behind `key` before kubectl returns."""
    hook = os.environ.get("KUBE_HOOK_URL")
    if hook:
        body = json.dumps({"workload": key, "replicas": replicas}).encode()
        request = urllib.request.Request(hook, data=body, method="POST", headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                response.read()
        except urllib.error.HTTPError as error:
            fail(f"{doing} {key}: {error.read().decode(errors='replace')}")


def rollout(namespace: str, args: list[str]) -> None:
    key, data, item = workload(namespace, args[1:])
    if args[0] == "restart":
        item["restarts"] = item.get("restarts", 0) + 1
        save_cluster(data)
        print(f"{key} restarted")
    elif args[0] == "status":
        print(f"{key} successfully rolled out")
    else:
        fail(f"rollout {args[0]} is not in this stand-in")


def pod_definition(namespace: str, name: str) -> dict[str, Any]:
    data = cluster()
    if f"{namespace}/{name}" in data["pods"]:
        mapped: dict[str, Any] = data["pods"][f"{namespace}/{name}"]
        return mapped
    pod = read_object("pods", namespace, name.removeprefix("pod/"))
    spec = pod["spec"]
    mounts_dir = ROOT / "mounts" / namespace / pod["metadata"]["name"]
    volumes: dict[str, Path] = {}
    for volume in spec.get("volumes", []):
        if "persistentVolumeClaim" in volume:
            path = ROOT / "volumes" / namespace / volume["persistentVolumeClaim"]["claimName"]
            if not path.is_dir():
                fail(f'persistentvolumeclaim "{volume["persistentVolumeClaim"]["claimName"]}" not found')
        elif "emptyDir" in volume:
            path = mounts_dir / volume["name"]
            path.mkdir(parents=True, exist_ok=True)
        elif "configMap" in volume or "secret" in volume:
            is_secret = "secret" in volume
            source = volume["secret"] if is_secret else volume["configMap"]
            obj = read_object("secrets" if is_secret else "configmaps", namespace, source.get("secretName") or source["name"])
            path = mounts_dir / volume["name"]
            path.mkdir(parents=True, exist_ok=True)
            items = source.get("items") or [{"key": k, "path": k} for k in obj.get("data", {})]
            for item in items:
                value = obj["data"][item["key"]]
                (path / item["path"]).write_bytes(base64.b64decode(value) if is_secret else value.encode())
        else:
            fail(f"volume {volume['name']}: this stand-in mounts claims, emptyDirs, ConfigMaps and Secrets")
        volumes[volume["name"]] = path
    container = spec["containers"][0]
    env = {}
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = item["value"]
        else:
            ref = item["valueFrom"]["secretKeyRef"]
            env[item["name"]] = base64.b64decode(read_object("secrets", namespace, ref["name"])["data"][ref["key"]]).decode()
    mounts = {m["mountPath"]: str(volumes[m["name"]]) for m in container.get("volumeMounts", [])}
    return {"env": env, "mounts": mounts}


def local_path(pod: dict[str, Any], path: str) -> str:
    for mount, local in sorted(pod.get("mounts", {}).items(), key=lambda item: -len(item[0])):
        if path == mount or path.startswith(mount + "/"):
            return local + path[len(mount) :]
    return path


def exec_(namespace: str, args: list[str], command: list[str]) -> None:
    interactive = "-i" in args or "-it" in args or "--stdin" in args
    names = [a for i, a in enumerate(args[1:], 1) if not a.startswith("-") and args[i - 1] not in ("-c", "--container")]
    pod = pod_definition(namespace, names[0])
    rewrite = cluster().get("rewrite", {})
    argv = []
    for arg in command:
        text = arg
        for old, new in rewrite.items():
            text = text.replace(old, new)
        argv.append(local_path(pod, text))
    programs = pod.get("programs")
    if programs is not None:
        if argv[0] not in programs:
            fail(f'exec: "{argv[0]}": executable file not found in $PATH of pod {names[0]}')
        argv = [*programs[argv[0]], *argv[1:]]
    env = {"PATH": os.environ["PATH"], **pod.get("env", {})}
    done = subprocess.run(argv, env=env, stdin=None if interactive else subprocess.DEVNULL, check=False)
    sys.exit(done.returncode)


def cp(namespace: str, args: list[str]) -> None:
    source, target = [a for a in args[1:] if not a.startswith("-")][:2]

    def resolve(spec: str) -> str:
        if ":" not in spec:
            return spec
        pod_name, path = spec.split(":", 1)
        ns, _, pod_name = pod_name.rpartition("/")
        return local_path(pod_definition(ns or namespace, pod_name), path)

    shutil.copyfile(resolve(source), resolve(target))


def wait(namespace: str, args: list[str]) -> None:
    condition = next(a.split("=", 1)[1] for a in args if a.startswith("--for="))
    target = next(a for a in args[1:] if not a.startswith("-"))
    name = target.split("/", 1)[1]
    exists = (ROOT / "pods" / namespace / f"{name}.json").exists() or f"{namespace}/{name}" in cluster()["pods"]
    if (condition == "delete") == exists:
        fail(f"timed out waiting for the condition on pods/{name}")
    print(f"pod/{name} condition met")


def delete(namespace: str, args: list[str]) -> None:
    names = [a for a in args if not a.startswith("-")]
    kind, name = names[0].split("/", 1) if "/" in names[0] else (names[0], names[1])
    if kind != "pod":
        fail(f"this stand-in deletes only pods, not {kind}")
    if f"{namespace}/{name}" in cluster()["pods"]:
        # a pod of a workload the test maps onto a real daemon: its controller re-creates it, the daemon restarts
        notify(f"{namespace}/pod/{name}", 1, "deleting")
        print(f'pod "{name}" deleted')
        return
    path = ROOT / "pods" / namespace / f"{name}.json"
    if not path.exists():
        fail(f'pods "{name}" not found')
    path.unlink()
    print(f'pod "{name}" deleted')


def main() -> None:
    argv = sys.argv[1:]
    record("calls.jsonl", {"argv": argv})
    namespace, args, command = parse(argv)
    verb = args[0] if args else ""
    handlers = {"get": get, "apply": apply, "scale": scale, "rollout": rollout, "cp": cp, "wait": wait, "delete": delete}
    if verb == "exec":
        exec_(namespace, args, command)
    elif verb in handlers:
        handlers[verb](namespace, args[1:] if verb not in ("cp", "wait") else args)
    else:
        fail(f"unknown command {verb!r} for this stand-in")


if __name__ == "__main__":
    main()
