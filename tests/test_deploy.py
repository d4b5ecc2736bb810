"""deploy/: every manifest parses and has what its kind needs; compose and Dockerfile agree.

No Kubernetes API server or schema registry is reachable from the test machines, so these are
structural checks (kinds, names, selectors that match, probes, resources, references between
objects), plus ``kubectl kustomize`` when kubectl is installed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
NAMESPACE = "rummikub"
REQUIRED_KINDS = {
    "Namespace", "ConfigMap", "Secret", "Deployment", "Service", "HorizontalPodAutoscaler",
    "StatefulSet", "PodDisruptionBudget", "NetworkPolicy", "Ingress",
}  # fmt: skip


def manifests() -> list[tuple[str, dict[str, Any]]]:
    documents = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for document in yaml.safe_load_all(path.read_text()):
            if document is not None:
                documents.append((path.name, document))
    return documents


def objects(kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for _, doc in manifests() if doc["kind"] == kind}


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


def test_every_manifest_parses_and_names_its_kind_and_namespace() -> None:
    found = manifests()
    assert {doc["kind"] for _, doc in found} >= REQUIRED_KINDS
    for name, doc in found:
        assert doc.get("apiVersion"), name
        assert doc["metadata"].get("name"), name
        if doc["kind"] != "Namespace":
            assert doc["metadata"].get("namespace") == NAMESPACE, (name, doc["kind"])


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    present = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_kustomize_renders_the_manifests() -> None:
    rendered = subprocess.run(
        ["kubectl", "kustomize", str(K8S)], capture_output=True, text=True, check=False
    )
    assert rendered.returncode == 0, rendered.stderr
    assert len(list(yaml.safe_load_all(rendered.stdout))) == len(manifests())


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
def test_workloads_select_their_own_pods_run_as_non_root_and_set_resources(kind: str) -> None:
    for name, workload in objects(kind).items():
        selector = workload["spec"]["selector"]["matchLabels"]
        labels = workload["spec"]["template"]["metadata"]["labels"]
        assert selector.items() <= labels.items(), name
        spec = pod_spec(workload)
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        for container in spec["containers"]:
            assert container["image"], name
            assert {"cpu", "memory"} <= container["resources"]["requests"].keys(), name
            assert {"cpu", "memory"} <= container["resources"]["limits"].keys(), name
            assert container["securityContext"]["allowPrivilegeEscalation"] is False, name


def test_the_app_is_ready_on_readyz_and_alive_on_healthz() -> None:
    app = objects("Deployment")["referee-app"]
    (container,) = pod_spec(app)["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports == {"http": 8000}
    assert app["spec"]["replicas"] >= 2


def test_the_dispatcher_runs_as_its_own_deployment_with_the_apps_keys() -> None:
    dispatcher = objects("Deployment")["referee-dispatcher"]
    assert dispatcher["spec"]["replicas"] >= 2  # more than one replica is safe
    spec = pod_spec(dispatcher)
    (container,) = spec["containers"]
    assert container["command"] == ["python", "-m", "service.dispatcher"]
    env = {item["name"]: item for item in container["env"]}
    assert env["REFEREE_API_KEYS_FILE"]["value"].startswith("/run/secrets/referee-api-keys/")
    assert {v["secret"]["secretName"] for v in spec["volumes"]} == {"referee-api-keys"}


def test_the_sweeper_runs_the_sweeper_module() -> None:
    sweeper = objects("Deployment")["referee-sweeper"]
    (container,) = pod_spec(sweeper)["containers"]
    assert container["command"] == ["python", "-m", "service.sweeper"]


def test_config_and_secret_references_exist() -> None:
    config_maps, secrets = objects("ConfigMap"), objects("Secret")
    for kind in ("Deployment", "StatefulSet"):
        for name, workload in objects(kind).items():
            spec = pod_spec(workload)
            for container in spec["containers"]:
                for source in container.get("envFrom", []):
                    assert source["configMapRef"]["name"] in config_maps, name
                for variable in container.get("env", []):
                    ref = variable.get("valueFrom", {}).get("secretKeyRef")
                    if ref:
                        assert ref["key"] in secrets[ref["name"]]["stringData"], name
            for volume in spec.get("volumes", []):
                if "configMap" in volume:
                    assert volume["configMap"]["name"] in config_maps, name


def test_services_select_existing_pods_and_the_hpa_scales_the_app() -> None:
    pod_labels = [
        workload["spec"]["template"]["metadata"]["labels"]
        for kind in ("Deployment", "StatefulSet")
        for workload in objects(kind).values()
    ]
    for name, service in objects("Service").items():
        selector = service["spec"]["selector"]
        assert any(selector.items() <= labels.items() for labels in pod_labels), name
    (hpa,) = objects("HorizontalPodAutoscaler").values()
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", "referee-app")
    assert hpa["spec"]["minReplicas"] >= 2
    ingress = objects("Ingress")["referee"]
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] in objects("Service")


def test_redis_is_a_statefulset_with_a_volume_and_the_append_only_file() -> None:
    redis = objects("StatefulSet")["redis"]
    assert objects("Service")[redis["spec"]["serviceName"]]["spec"]["clusterIP"] == "None"
    assert redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    conf = objects("ConfigMap")["redis-config"]["data"]["redis.conf"]
    assert "appendonly yes" in conf and "maxmemory-policy noeviction" in conf
    # the stream node settings bench/memory.py measures with (deploy/redis.conf's)
    streams = [
        line
        for line in (DEPLOY / "redis.conf").read_text().splitlines()
        if line.startswith("stream-node-")
    ]
    held = [line.strip() for line in conf.splitlines()]
    assert len(streams) == 2 and all(line in held for line in streams)


def test_compose_runs_two_app_replicas_behind_nginx_a_sweeper_and_redis_with_aof() -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"app", "nginx", "sweeper", "dispatcher", "redis"}
    assert services["dispatcher"]["command"] == ["python", "-m", "service.dispatcher"]
    assert services["app"]["deploy"]["replicas"] == 2
    assert services["app"]["build"]["dockerfile"] == "deploy/Dockerfile"
    assert services["sweeper"]["command"] == ["python", "-m", "service.sweeper"]
    assert "./redis.conf:/usr/local/etc/redis/redis.conf:ro" in services["redis"]["volumes"]
    assert any(volume.startswith("redis-data:") for volume in services["redis"]["volumes"])
    assert "redis-data" in compose["volumes"]
    nginx_conf = (DEPLOY / "nginx" / "referee.conf").read_text()
    assert "server app:8000" in nginx_conf
    mounted = services["nginx"]["volumes"][0].split(":")[0]
    assert (DEPLOY / mounted).resolve() == (DEPLOY / "nginx" / "referee.conf").resolve()
    assert "appendonly yes" in (DEPLOY / "redis.conf").read_text()


def test_the_image_is_python_slim_runs_as_non_root_and_serves_with_gunicorn() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "FROM python:3.11-slim" in dockerfile
    user = next(line for line in dockerfile.splitlines() if line.startswith("USER "))
    assert user.split()[1].split(":")[0] not in {"0", "root"}
    assert '"-c", "deploy/gunicorn.conf.py", "service.app:create_app()"' in dockerfile
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text()
    assert "!service/" in ignore and "!openapi.yaml" in ignore


def test_the_apps_keys_are_mounted_from_a_secret_as_a_file_and_compose_reads_an_env_file() -> None:
    secret = objects("Secret")["referee-api-keys"]
    lines = [
        line
        for line in secret["stringData"]["api-keys"].splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines and all("=" in line and len(line.split("=", 1)[1]) >= 24 for line in lines)
    spec = pod_spec(objects("Deployment")["referee-app"])
    app = spec["containers"][0]
    env = {item["name"]: item.get("value") for item in app["env"]}
    mount = next(m for m in app["volumeMounts"] if m["name"] == "api-keys")
    assert mount["readOnly"] is True
    assert env["REFEREE_API_KEYS_FILE"] == mount["mountPath"] + "/api-keys"
    volume = next(v for v in spec["volumes"] if v["name"] == "api-keys")
    assert volume["secret"]["secretName"] == "referee-api-keys"
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    env_files = compose["services"]["app"]["env_file"]
    assert {"path": "./referee-api-keys.env", "required": False} in env_files
    example = (DEPLOY / "referee-api-keys.env.example").read_text()
    assert "REFEREE_API_KEYS=" in example
