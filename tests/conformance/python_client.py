"""Conformance of the embedded cluster, checked with the official Kubernetes
Python client (PyPI `kubernetes`), used exactly as against a real cluster.

Usage: python_client.py KUBECONFIG
Exits non-zero on the first failed check, naming it.
"""

import json
import sys
import time
import uuid

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

KUBECONFIG = sys.argv[1]
NAMESPACE = "shop"
POD = "redis-0"
TARGET = "redis"

passed = []


def check(name, condition, detail=""):
    if not condition:
        print(f"FAIL {name}: {detail}", flush=True)
        sys.exit(1)
    passed.append(name)
    print(f"ok   {name}", flush=True)


def api(context="sim"):
    return client.CoreV1Api(config.new_client_from_config(config_file=KUBECONFIG, context=context))


def expect_error(call, status):
    try:
        call()
    except ApiException as e:
        return e.status == status, json.loads(e.body) if e.body else {}
    return False, {}


core = api()

# Lists, across namespaces and in one, with selectors.
everything = core.list_pod_for_all_namespaces()
check("list all namespaces", len(everything.items) >= 15, len(everything.items))
check("list has a resourceVersion", int(everything.metadata.resource_version) > 0)
shop = core.list_namespaced_pod(NAMESPACE)
check("list one namespace", all(p.metadata.namespace == NAMESPACE for p in shop.items) and shop.items)
labelled = core.list_pod_for_all_namespaces(label_selector="app.kubernetes.io/name=storefront")
check("label selector", len(labelled.items) == 3, [p.metadata.name for p in labelled.items])
running = core.list_pod_for_all_namespaces(field_selector="status.phase=Running,metadata.namespace=payments")
check("field selector", running.items and all(p.status.phase == "Running" and p.metadata.namespace == "payments" for p in running.items))
ok, body = expect_error(lambda: core.list_pod_for_all_namespaces(field_selector="spec.nope=x"), 400)
check("unsupported field selector is 400", ok and body.get("reason") == "BadRequest", body)
namespaces = core.list_namespace()
check("namespaces", {"shop", "payments", "kube-system"} <= {n.metadata.name for n in namespaces.items})

# Paging with limit/continue returns every pod exactly once.
seen, token = [], None
while True:
    page = core.list_pod_for_all_namespaces(limit=4, _continue=token)
    seen += [(p.metadata.namespace, p.metadata.name) for p in page.items]
    token = page.metadata._continue
    if not token:
        break
    check("page size respected", len(page.items) == 4, len(page.items))
check("paging covers the list exactly", sorted(seen) == sorted((p.metadata.namespace, p.metadata.name) for p in everything.items))

# Logs.
log = core.read_namespaced_pod_log(POD, NAMESPACE, container=TARGET, tail_lines=1)
check("read log with tailLines", "handled request" in log and log.count("\n") <= 1, repr(log))
stamped = core.read_namespaced_pod_log(POD, NAMESPACE, container=TARGET, timestamps=True, tail_lines=1)
check("read log with timestamps", stamped[:4].isdigit() and "T" in stamped.split(" ")[0], repr(stamped))
ok, body = expect_error(lambda: core.read_namespaced_pod_log("storefront-7d9c8b6f4-x2k9p", NAMESPACE), 400)
check("log needs a container when there are several", ok and "a container name must be specified" in body.get("message", ""), body)
previous = core.read_namespaced_pod_log("ledger-worker-7f9c6d8b5-w9x8v", "payments", previous=True)
check("previous run's log", "FATAL ledger-worker" in previous, repr(previous))
ok, body = expect_error(lambda: core.read_namespaced_pod_log(POD, NAMESPACE, container=TARGET, previous=True), 400)
check("no previous run, no previous log", ok and "previous terminated container" in body.get("message", ""), body)
finished = core.read_namespaced_pod_log("redis-0", "shop", container="init-config")
check("a finished init container's log", "init-config: done" in finished, repr(finished))
everywhere = core.list_event_for_all_namespaces()
check("events of all namespaces", {"search", "payments"} <= {e.metadata.namespace for e in everywhere.items},
      sorted({e.metadata.namespace for e in everywhere.items}))
seen = []
for event in watch.Watch().stream(core.list_event_for_all_namespaces, timeout_seconds=2):
    seen.append(event["type"])
    break
check("events watch across namespaces", seen == ["ADDED"], seen)

# 404 and 401.
ok, body = expect_error(lambda: core.read_namespaced_pod("no-such-pod", NAMESPACE), 404)
check("404 NotFound", ok and body.get("reason") == "NotFound" and body.get("message") == 'pods "no-such-pod" not found', body)
with open(KUBECONFIG) as f:
    forged = json.load(f)
for user in forged["users"]:
    user["user"]["token"] = "not-a-valid-token"
bad_api = config.new_client_from_config_dict(forged, context="sim")
ok, body = expect_error(lambda: client.CoreV1Api(bad_api).list_namespaced_pod(NAMESPACE), 401)
check("401 without a valid token", ok and body.get("reason") == "Unauthorized", body)

# Add an ephemeral container with the client's patch call, then wait for it through a watch.
name = "conformance-" + uuid.uuid4().hex[:6]
debug = {
    "name": name,
    "image": "busybox:1.36",
    "command": ["sh"],
    "stdin": True,
    "tty": True,
    "targetContainerName": TARGET,
}
before = core.read_namespaced_pod(POD, NAMESPACE)
patched = core.patch_namespaced_pod_ephemeralcontainers(POD, NAMESPACE, {"spec": {"ephemeralContainers": [debug]}})
added = [c for c in patched.spec.ephemeral_containers if c.name == name]
check("patch adds the ephemeral container", len(added) == 1 and added[0].target_container_name == TARGET)
check("apiserver defaults applied", added[0].termination_message_policy == "File" and added[0].image_pull_policy == "IfNotPresent")
check("patch touches nothing else", patched.metadata.labels == before.metadata.labels and patched.metadata.annotations == before.metadata.annotations)

state = None
w = watch.Watch()
for event in w.stream(core.list_namespaced_pod, NAMESPACE, field_selector=f"metadata.name={POD}",
                      resource_version=patched.metadata.resource_version, timeout_seconds=30):
    statuses = event["object"].status.ephemeral_container_statuses or []
    mine = [s for s in statuses if s.name == name]
    if mine and mine[0].state.running:
        state = mine[0].state
        w.stop()
check("watch sees the container running", state is not None and state.running.started_at is not None)

events = core.list_namespaced_event(NAMESPACE, field_selector=f"involvedObject.name={POD}")
reasons = [e.reason for e in events.items if e.involved_object.field_path == f"spec.ephemeralContainers{{{name}}}"]
check("kubelet events", ["Pulling", "Pulled", "Created", "Started"] == reasons, reasons)

# exec with the stream() helper.
out = stream(core.connect_get_namespaced_pod_exec, POD, NAMESPACE, container=TARGET,
             command=["sh", "-c", "echo exec-ok"], stderr=True, stdin=False, stdout=True, tty=False)
check("exec through stream()", out.strip() == "exec-ok", repr(out))

resp = stream(core.connect_get_namespaced_pod_exec, POD, NAMESPACE, container=TARGET,
              command=["sh", "-c", "echo to-stderr >&2; exit 3"], stderr=True, stdin=False, stdout=True,
              tty=False, _preload_content=False)
resp.run_forever(timeout=10)
check("exec exit code", resp.returncode == 3, resp.returncode)
stderr_text = resp.read_stderr()
check("exec stderr channel", "to-stderr" in stderr_text, repr(stderr_text))

# attach to the debug container and run a command in its shell.
session = stream(core.connect_get_namespaced_pod_attach, POD, NAMESPACE, container=name,
                 stdin=True, stdout=True, stderr=False, tty=True, _preload_content=False)
session.write_stdin("echo attach-$((6*7))\n")
output, deadline = "", time.time() + 10
while time.time() < deadline and "attach-42" not in output:
    session.update(timeout=1)
    if session.peek_stdout():
        output += session.read_stdout()
session.close()
check("attach runs a command in the debug container", "attach-42" in output, repr(output))

# 422 Invalid: a duplicate name and a forbidden field, with causes and field paths.
dup = dict(debug)
ok, body = expect_error(lambda: core.patch_namespaced_pod_ephemeralcontainers(POD, NAMESPACE, {"spec": {"ephemeralContainers": [dict(dup, name=TARGET)]}}), 422)
causes = body.get("details", {}).get("causes", [])
check("422 on a duplicate name", ok and body.get("reason") == "Invalid"
      and any(c.get("reason") == "FieldValueDuplicate" and c.get("field", "").endswith(".name") for c in causes), body)
ported = dict(debug, name="with-ports", ports=[{"containerPort": 80}])
ok, body = expect_error(lambda: core.patch_namespaced_pod_ephemeralcontainers(POD, NAMESPACE, {"spec": {"ephemeralContainers": [ported]}}), 422)
causes = body.get("details", {}).get("causes", [])
check("422 on ports", ok and any(c.get("reason") == "FieldValueForbidden" and c.get("field", "").endswith("].ports") for c in causes), body)

# 403 for the viewer, worded like the apiserver.
viewer = api("sim-viewer")
check("viewer may list", len(viewer.list_namespaced_pod(NAMESPACE).items) > 0)
ok, body = expect_error(lambda: viewer.patch_namespaced_pod_ephemeralcontainers(POD, NAMESPACE, {"spec": {"ephemeralContainers": [dict(debug, name="nope")]}}), 403)
check("403 for the viewer", ok and body.get("reason") == "Forbidden" and body.get("message") ==
      f'pods "{POD}" is forbidden: User "sim-viewer" cannot patch resource "pods/ephemeralcontainers" in API group "" in the namespace "{NAMESPACE}"', body)

# Pod Security admission: payments enforces baseline, which refuses SYS_PTRACE.
PAYMENTS_POD = "payments-api-66b8f7d5c9-qv8lm"
traced = dict(debug, name="psa-" + uuid.uuid4().hex[:6], targetContainerName="api",
              securityContext={"capabilities": {"add": ["SYS_PTRACE"]}})
ok, body = expect_error(lambda: core.patch_namespaced_pod_ephemeralcontainers(PAYMENTS_POD, "payments", {"spec": {"ephemeralContainers": [traced]}}), 403)
check("PodSecurity baseline refuses SYS_PTRACE", ok and body.get("reason") == "Forbidden" and body.get("message") ==
      f'pods "{PAYMENTS_POD}" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities '
      f'(container "{traced["name"]}" must not include "SYS_PTRACE" in securityContext.capabilities.add)', body)
plain = dict(traced, name="psa-" + uuid.uuid4().hex[:6])
del plain["securityContext"]
admitted = core.patch_namespaced_pod_ephemeralcontainers(PAYMENTS_POD, "payments", {"spec": {"ephemeralContainers": [plain]}})
check("PodSecurity baseline admits the baseline profile", any(c.name == plain["name"] for c in admitted.spec.ephemeral_containers))
labels = core.read_namespace("monitoring").metadata.labels
check("monitoring enforces restricted", labels.get("pod-security.kubernetes.io/enforce") == "restricted", labels)

# apps/v1, read-only: the owners kubectl and podbay resolve deploy/NAME through.
apps = client.AppsV1Api(config.new_client_from_config(config_file=KUBECONFIG, context="sim"))
storefront = apps.read_namespaced_deployment("storefront", NAMESPACE)
check("a deployment decodes", storefront.spec.selector.match_labels == {"app.kubernetes.io/name": "storefront"}
      and storefront.spec.replicas == 3, storefront.spec.selector)
selected = core.list_namespaced_pod(NAMESPACE, label_selector="app.kubernetes.io/name=storefront")
check("its selector picks its pods", len(selected.items) == 3, [p.metadata.name for p in selected.items])
sets = apps.list_namespaced_replica_set(NAMESPACE)
owned = [r for r in sets.items if r.metadata.owner_references and r.metadata.owner_references[0].uid == storefront.metadata.uid]
check("its replica set names it by uid", len(owned) == 1, [r.metadata.name for r in sets.items])
check("the pods name the replica set by uid",
      all(p.metadata.owner_references[0].uid == owned[0].metadata.uid for p in selected.items))
check("deployments across namespaces", len(apps.list_deployment_for_all_namespaces().items) >= 5)
ok, body = expect_error(lambda: apps.read_namespaced_deployment("nothing", NAMESPACE), 404)
check("404 names the group", ok and body.get("message") == 'deployments.apps "nothing" not found'
      and body.get("details", {}).get("group") == "apps", body)
dev_apps = client.AppsV1Api(config.new_client_from_config(config_file=KUBECONFIG, context="sim-dev"))
ok, body = expect_error(lambda: dev_apps.read_namespaced_deployment("payments-api", "payments"), 403)
check("403 names the group", ok and body.get("message") ==
      'deployments.apps "payments-api" is forbidden: User "sim-dev" cannot get resource "deployments" in API group "apps" in the namespace "payments"', body)


# Services and their EndpointSlices (discovery.k8s.io/v1), kept by the
# endpoints controller from the pods' readiness; the other workload kinds.
service = core.read_namespaced_service("storefront", NAMESPACE)
check("a service decodes", service.spec.selector == {"app.kubernetes.io/name": "storefront"}
      and service.spec.ports[0].port == 80 and service.spec.ports[0].target_port == "http", service.spec)
discovery = client.DiscoveryV1Api(config.new_client_from_config(config_file=KUBECONFIG, context="sim"))
slices = discovery.list_namespaced_endpoint_slice(NAMESPACE, label_selector="kubernetes.io/service-name=storefront")
check("one endpoint slice per service", len(slices.items) == 1, [s.metadata.name for s in slices.items])
endpoint_slice = slices.items[0]
check("the slice is the service's", endpoint_slice.address_type == "IPv4"
      and endpoint_slice.metadata.owner_references[0].uid == service.metadata.uid, endpoint_slice.metadata)
check("the slice's port is the pods' named port", [(p.name, p.port) for p in endpoint_slice.ports] == [("http", 8080)],
      endpoint_slice.ports)
selected_names = sorted(p.metadata.name for p in selected.items)
check("the slice lists the pods it selects", sorted(e.target_ref.name for e in endpoint_slice.endpoints) == selected_names,
      [e.target_ref.name for e in endpoint_slice.endpoints])
ready_pods = sorted(p.metadata.name for p in selected.items
                    if any(c.type == "Ready" and c.status == "True" for c in (p.status.conditions or [])))
check("ready endpoints are the ready pods",
      sorted(e.target_ref.name for e in endpoint_slice.endpoints if e.conditions.ready) == ready_pods, ready_pods)
check("slices across namespaces", len(discovery.list_endpoint_slice_for_all_namespaces().items) >= 4)
check("daemon sets decode", any(d.metadata.name == "log-shipper" and d.status.desired_number_scheduled >= 1
                                for d in apps.list_daemon_set_for_all_namespaces().items))
batch = client.BatchV1Api(config.new_client_from_config(config_file=KUBECONFIG, context="sim"))
jobs = {j.metadata.name: j for j in batch.list_job_for_all_namespaces().items}
check("a failed job says so", any(c.type == "Failed" and c.status == "True"
                                  for c in (jobs["reindex-orders"].status.conditions or [])), list(jobs))
check("cron jobs decode", any(c.spec.schedule for c in batch.list_cron_job_for_all_namespaces().items))

# metrics.k8s.io/v1beta1, as metrics-server serves it, through the generic
# custom objects API (the Python client has no typed metrics API).
metrics_api = client.CustomObjectsApi(config.new_client_from_config(config_file=KUBECONFIG, context="sim"))
groups = client.ApisApi(config.new_client_from_config(config_file=KUBECONFIG, context="sim")).get_api_versions()
check("discovery lists metrics.k8s.io", any(g.name == "metrics.k8s.io" and g.preferred_version.version == "v1beta1"
                                            for g in groups.groups), [g.name for g in groups.groups])
indexer = None
for _ in range(60):
    listed = metrics_api.list_namespaced_custom_object("metrics.k8s.io", "v1beta1", "search", "pods")
    indexer = next((m for m in listed["items"] if m["metadata"]["name"].startswith("search-indexer-")), None)
    if indexer and indexer["containers"] and indexer["containers"][0]["usage"]["memory"] != "0":
        break
    time.sleep(0.5)
check("PodMetrics of a running pod", indexer is not None and listed["kind"] == "PodMetricsList"
      and indexer["containers"][0]["name"] == "indexer" and indexer["window"].endswith("s"), indexer)
check("its memory is its process's", indexer["containers"][0]["usage"]["memory"] != "0", indexer)
one = metrics_api.get_namespaced_custom_object("metrics.k8s.io", "v1beta1", "search", "pods", indexer["metadata"]["name"])
check("one PodMetrics by name", one["kind"] == "PodMetrics" and one["metadata"]["namespace"] == "search", one)
nodes_used = metrics_api.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes")
check("NodeMetrics of every node", {"node-a1", "node-b1"} <= {n["metadata"]["name"] for n in nodes_used["items"]}, nodes_used)
dev_metrics = client.CustomObjectsApi(config.new_client_from_config(config_file=KUBECONFIG, context="sim-dev"))
ok, body = expect_error(lambda: dev_metrics.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "pods"), 403)
check("403 on pod metrics across namespaces", ok and body.get("message") ==
      'pods.metrics.k8s.io is forbidden: User "sim-dev" cannot list resource "pods" in API group "metrics.k8s.io" at the cluster scope', body)
check("pod metrics of its namespace", isinstance(dev_metrics.list_namespaced_custom_object("metrics.k8s.io", "v1beta1", "shop", "pods")["items"], list))



# pods/portforward: the WebSocket channel protocol, as the client speaks it.
from kubernetes.stream import portforward


def fetch(pod, namespace, port, request):
    forward = portforward(core.connect_get_namespaced_pod_portforward, pod, namespace, ports=str(port))
    sock = forward.socket(port)
    sock.setblocking(True)
    answer = b""
    try:
        # The kubelet closes at once when the port refuses: the request may
        # not even be sent.
        sock.sendall(request)
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    except (BrokenPipeError, ConnectionResetError):
        pass
    sock.close()
    error = forward.error(port)
    forward.close()
    return answer, error


metrics, error = fetch(PAYMENTS_POD, "payments", 8080, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check("port-forward reaches payments-api's /metrics",
      metrics.startswith(b"HTTP/1.1 200 OK") and b"# TYPE http_requests_total counter" in metrics and error is None,
      (metrics[:200], error))
pong, error = fetch(POD, NAMESPACE, 6379, b"PING\r\nQUIT\r\n")
check("port-forward reaches redis", pong == b"+PONG\r\n+OK\r\n", (pong, error))
nothing, error = fetch(POD, NAMESPACE, 7777, b"hello")
check("a port nothing listens on is the kubelet's error",
      nothing == b"" and error is not None and "connect: connection refused" in error, (nothing, error))
viewer = api("sim-viewer")
try:
    portforward(viewer.connect_get_namespaced_pod_portforward, POD, NAMESPACE, ports="6379")
    refusal = ""
except ApiException as e:
    # The client reports a refused WebSocket handshake as status 0, with the
    # server's answer in its reason.
    refusal = str(e.reason)
check("port-forward is refused without pods/portforward",
      "Handshake status 403" in refusal and 'resource \\"pods/portforward\\"' in refusal, refusal)

# Nodes, and creating a pod on one (what podbay's node debugging sends).
nodes = {n.metadata.name: n for n in core.list_node().items}
check("nodes", {"node-a1", "node-b1", "node-win1"} <= set(nodes), sorted(nodes))
ready = {n: next(c.status for c in node.status.conditions if c.type == "Ready") for n, node in nodes.items()}
check("node readiness", ready["node-a1"] == "True" and ready["node-win1"] == "Unknown", ready)
check("control plane taint", nodes["node-a1"].spec.taints[0].effect == "NoSchedule", nodes["node-a1"].spec.taints)
debug_pod = client.V1Pod(
    metadata=client.V1ObjectMeta(generate_name="py-node-debugger-"),
    spec=client.V1PodSpec(
        node_name="node-a2", host_pid=True, restart_policy="Never",
        tolerations=[client.V1Toleration(operator="Exists")],
        containers=[client.V1Container(name="debugger", image="busybox:1.36", command=["sleep", "60"])],
    ),
)
created = core.create_namespaced_pod("default", debug_pod)
check("create a pod", created.metadata.name.startswith("py-node-debugger-") and created.status.phase == "Pending",
      (created.metadata.name, created.status.phase))
check("create defaults", created.spec.dns_policy == "ClusterFirst" and created.spec.containers[0].image_pull_policy == "IfNotPresent",
      created.spec)
ok, body = expect_error(lambda: core.create_namespaced_pod("default", client.V1Pod(
    metadata=client.V1ObjectMeta(name=created.metadata.name),
    spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]))), 409)
check("a taken name is 409 AlreadyExists", ok and body.get("reason") == "AlreadyExists", body)
ok, body = expect_error(lambda: core.create_namespaced_pod("payments", debug_pod), 403)
check("Pod Security refuses host namespaces in payments", ok and "hostPID=true" in body.get("message", ""), body)
ok, body = expect_error(lambda: viewer.create_namespaced_pod("default", debug_pod), 403)
check("the viewer may not create pods", ok and 'cannot create resource "pods"' in body.get("message", ""), body)
core.delete_namespaced_pod(created.metadata.name, "default", grace_period_seconds=0)

# A body sent in chunks after `Expect: 100-continue` (as curl and Go send a
# large one), created in a server dry run: 201, and nothing stored.
configuration = core.api_client.configuration
manifest = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "chunked-upload"},
                       "spec": {"containers": [{"name": "a", "image": "busybox:1.36"}]}}).encode()
pieces = (manifest[i:i + 7] for i in range(0, len(manifest), 7))
answer = core.api_client.rest_client.pool_manager.urlopen(
    "POST", f"{configuration.host}/api/v1/namespaces/default/pods?dryRun=All",
    body=pieces, chunked=True, preload_content=True,
    headers={"Content-Type": "application/json", "Expect": "100-continue",
             "Authorization": configuration.api_key["BearerToken"]},
)
check("a chunked upload after Expect: 100-continue", answer.status == 201 and
      json.loads(answer.data)["metadata"]["name"] == "chunked-upload", (answer.status, answer.data[:200]))
ok, _ = expect_error(lambda: core.read_namespaced_pod("chunked-upload", "default"), 404)
check("a server dry run stores nothing", ok)

print(f"python client conformance: {len(passed)} passed, 0 failed", flush=True)
