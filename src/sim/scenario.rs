//! The pods the simulator starts with: a hand-made demo cluster, or `N`
//! generated pods for scale tests. Both are deterministic.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::ids::hex_id;
pub(crate) use super::ids::uid;
use super::images::Image;
use crate::model::debug::{NAME_ALPHABET, name_suffix};
use crate::model::pod_security::{Level, Policy};

/// Namespaces of the demo, and the node names pods are spread over.
pub const NAMESPACES: [&str; 7] = [
    "default",
    "shop",
    "payments",
    "search",
    "monitoring",
    "batch",
    "kube-system",
];
const NODES: [&str; 4] = super::nodes::LINUX;

/// What a demo pod is doing.
#[derive(Clone, Copy)]
enum Shape {
    Running,
    CrashLoop,
    Pending,
    Completed,
    /// Ran to its end and failed (a Job's pod that will not be retried).
    Failed,
    InitRunning,
    ImagePullBackOff,
}

struct PodSpec<'a> {
    namespace: &'a str,
    name: String,
    app: &'a str,
    containers: Vec<(&'a str, &'a str)>,
    init: Vec<(&'a str, &'a str)>,
    shape: Shape,
    node: Option<&'a str>,
    age: SignedDuration,
    static_pod: bool,
    windows: bool,
    /// Volumes, mounted in every container.
    volumes: Vec<Volume<'a>>,
    /// Which controller made it.
    owner: Owned,
}

/// The controller of a demo pod, named by the pod's name less its last
/// `-suffix` (a StatefulSet's, its ordinal).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owned {
    ReplicaSet,
    StatefulSet,
    Job,
    DaemonSet,
}

/// A demo pod's volume: a claim named `NAME-POD` (as a StatefulSet makes
/// it), else an emptyDir.
struct Volume<'a> {
    name: &'a str,
    path: &'a str,
    claimed: bool,
}

/// The demo scenario: several namespaces, deployment-style names, 1–3
/// containers, init containers, and a few pods in trouble.
pub fn demo(now: Timestamp) -> Vec<Value> {
    let mut pods = Vec::new();
    let mut push = |spec: PodSpec<'_>| pods.push(build(&spec, now));
    let hours = |h: i64| SignedDuration::from_hours(h);
    let deployment = |namespace,
                      app,
                      hash,
                      suffixes: &[&str],
                      containers: Vec<(&'static str, &'static str)>,
                      age| {
        suffixes
            .iter()
            .enumerate()
            .map(|(i, s)| PodSpec {
                namespace,
                name: format!("{app}-{hash}-{s}"),
                app,
                containers: containers.clone(),
                init: vec![],
                shape: Shape::Running,
                node: Some(NODES[i % NODES.len()]),
                age,
                static_pod: false,
                windows: false,
                volumes: vec![],
                owner: Owned::ReplicaSet,
            })
            .collect::<Vec<_>>()
    };
    for spec in deployment(
        "shop",
        "storefront",
        "7d9c8b6f4",
        &["x2k9p", "m4q7z", "t8w3n"],
        vec![
            ("web", "ghcr.io/podbay/storefront:2.14.1"),
            ("envoy", "envoyproxy/envoy:v1.31.2"),
        ],
        hours(52),
    ) {
        push(spec);
    }
    for spec in deployment(
        "shop",
        "cart",
        "5f6d7c9b8",
        &["h2j4k", "p9r2s"],
        vec![("cart", "ghcr.io/podbay/cart:1.8.0")],
        hours(30),
    ) {
        push(spec);
    }
    for spec in deployment(
        "payments",
        "payments-api",
        "66b8f7d5c9",
        &["qv8lm", "zr4kd"],
        vec![
            ("api", "gcr.io/distroless/payments-api:3.2.0"),
            ("envoy", "envoyproxy/envoy:v1.31.2"),
            ("log-shipper", "fluent/fluent-bit:3.1"),
        ],
        hours(75),
    ) {
        push(spec);
    }
    for spec in deployment(
        "search",
        "search-indexer",
        "84d6b9c7f",
        &["a7b2c"],
        vec![("indexer", "ghcr.io/podbay/indexer:0.9.3")],
        hours(12),
    ) {
        push(spec);
    }
    for spec in deployment(
        "default",
        "hello",
        "6c8f9d7b5",
        &["k3l9m"],
        vec![("hello", "nginx:1.27")],
        hours(200),
    ) {
        push(spec);
    }
    for spec in deployment(
        "monitoring",
        "prometheus",
        "5b7c8d9f6",
        &["r2d2x"],
        vec![
            ("prometheus", "prom/prometheus:v2.54.1"),
            (
                "config-reloader",
                "quay.io/prometheus-operator/prometheus-config-reloader:v0.76.0",
            ),
        ],
        hours(400),
    ) {
        push(spec);
    }
    let one = |namespace, name: &str, app, containers, init, shape, node, age| PodSpec {
        namespace,
        name: name.to_string(),
        app,
        containers,
        init,
        shape,
        node,
        age,
        static_pod: false,
        windows: false,
        volumes: vec![],
        owner: Owned::ReplicaSet,
    };
    let mut redis = one(
        "shop",
        "redis-0",
        "redis",
        vec![("redis", "redis:7.4")],
        vec![("init-config", "busybox:1.36")],
        Shape::Running,
        Some("node-b1"),
        hours(90),
    );
    redis.owner = Owned::StatefulSet;
    redis.volumes = vec![Volume {
        name: "data",
        path: "/data",
        claimed: true,
    }];
    push(redis);
    let mut ledger = one(
        "payments",
        "ledger-worker-7f9c6d8b5-w9x8v",
        "ledger-worker",
        vec![("worker", "ghcr.io/podbay/ledger:1.0.4")],
        vec![],
        Shape::CrashLoop,
        Some("node-a2"),
        hours(5),
    );
    // Where its crashes leave their core files, past the restart.
    ledger.volumes = vec![Volume {
        name: "crash",
        path: CRASH_DIR,
        claimed: false,
    }];
    push(ledger);
    let mut migrate = one(
        "search",
        "search-migrate-2b8x4",
        "search-migrate",
        vec![("migrate", "ghcr.io/podbay/indexer:0.9.3")],
        vec![("wait-for-db", "busybox:1.36")],
        Shape::InitRunning,
        Some("node-b2"),
        SignedDuration::from_mins(3),
    );
    migrate.owner = Owned::Job;
    push(migrate);
    push(one(
        "search",
        "search-gpu-5c7d9f8b6-l2m3n",
        "search-gpu",
        vec![("indexer", "ghcr.io/podbay/indexer-gpu:0.9.3")],
        vec![],
        Shape::Pending,
        None,
        SignedDuration::from_mins(20),
    ));
    // A CronJob's Job (`<cronjob>-<minutes since the epoch>`) that ran.
    let mut report = one(
        "batch",
        "nightly-report-29121440-8xk2p",
        "nightly-report",
        vec![("report", "ghcr.io/podbay/report:5.1")],
        vec![],
        Shape::Completed,
        Some("node-a1"),
        hours(7),
    );
    report.owner = Owned::Job;
    push(report);
    // A Job that failed its one try (backoffLimit 0).
    let mut reindex = one(
        "batch",
        "reindex-orders-q7t2m",
        "reindex-orders",
        vec![("reindex", "ghcr.io/podbay/indexer:0.9.3")],
        vec![],
        Shape::Failed,
        Some("node-b1"),
        hours(2),
    );
    reindex.owner = Owned::Job;
    push(reindex);
    // A log shipper on every Linux node.
    for (node, suffix) in NODES.iter().zip(["4kx7d", "9pw2r", "c6m8t", "h3v5n"]) {
        let mut shipper = one(
            "kube-system",
            &format!("log-shipper-{suffix}"),
            "log-shipper",
            vec![("shipper", "fluent/fluent-bit:3.1.9")],
            vec![],
            Shape::Running,
            Some(node),
            hours(300),
        );
        shipper.owner = Owned::DaemonSet;
        push(shipper);
    }
    push(one(
        "batch",
        "thumbnailer-6d5c8b9f7-q4w5e",
        "thumbnailer",
        vec![("thumbnailer", "ghcr.io/podbay/thumbnailer-doesnotexist:1.0")],
        vec![],
        Shape::ImagePullBackOff,
        Some("node-b2"),
        SignedDuration::from_mins(45),
    ));
    let mut apiserver = one(
        "kube-system",
        "kube-apiserver-node-a1",
        "kube-apiserver",
        vec![("kube-apiserver", "registry.k8s.io/kube-apiserver:v1.34.0")],
        vec![],
        Shape::Running,
        Some("node-a1"),
        hours(900),
    );
    apiserver.static_pod = true;
    push(apiserver);
    push(one(
        "kube-system",
        "coredns-7db6d8ff4d-5xq2v",
        "kube-dns",
        vec![("coredns", "registry.k8s.io/coredns/coredns:v1.11.3")],
        vec![],
        Shape::Running,
        Some("node-a2"),
        hours(900),
    ));
    let mut windows = one(
        "default",
        "iis-legacy-5d4c7b8f9-w1n2k",
        "iis-legacy",
        vec![(
            "iis",
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
        )],
        vec![],
        Shape::Running,
        Some("node-win1"),
        hours(60),
    );
    windows.windows = true;
    push(windows);
    for pod in &mut pods {
        run_api_as_nonroot(pod);
        if pod["metadata"]["name"] == "hello-6c8f9d7b5-k3l9m" {
            leave_old_debuggers(pod, now);
        }
    }
    pods
}

/// Debug containers past SREs left in `hello` (they can never be removed):
/// one kubectl added two days ago, which was killed, one whose shell ended,
/// one podbay added, all ended; and a shell someone left attached-to-nobody
/// three hours ago, which the kubelet starts with the pod (it has no status
/// yet). What `podbay debuggers` finds.
fn leave_old_debuggers(pod: &mut Value, now: Timestamp) {
    let ago = |h: i64| (now - SignedDuration::from_hours(h)).to_string();
    let debuggers = [
        (
            "debugger-7kq2x",
            "busybox:1.36",
            Some("hello"),
            50,
            49,
            137,
            "Error",
            "kubectl-debug",
        ),
        (
            "debugger-w4m9z",
            "nicolaka/netshoot:v0.13",
            Some("hello"),
            30,
            29,
            0,
            "Completed",
            "kubectl-debug",
        ),
        (
            "debugger-p2n6v",
            "busybox:1.36",
            Some("hello"),
            6,
            5,
            0,
            "Completed",
            "podbay",
        ),
    ];
    let mut specs = Vec::new();
    let mut statuses = Vec::new();
    let mut managed = Vec::new();
    for (name, image, target, started, finished, code, reason, manager) in debuggers {
        let mut spec = json!({"name": name, "image": image, "stdin": true, "tty": true,
            "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File"});
        if let Some(target) = target {
            spec["targetContainerName"] = json!(target);
        }
        specs.push(spec);
        statuses.push(
            json!({"name": name, "image": image, "imageID": "", "ready": false,
            "restartCount": 0, "state": {"terminated": {"exitCode": code, "reason": reason,
                "startedAt": ago(started), "finishedAt": ago(finished),
                "containerID": format!("containerd://{:0>64}", name.len() * 7919)}}}),
        );
        managed.push(
            json!({"manager": manager, "operation": "Update", "apiVersion": "v1",
            "time": ago(started), "fieldsType": "FieldsV1", "subresource": "ephemeralcontainers",
            "fieldsV1": {"f:spec": {"f:ephemeralContainers": {
                format!("k:{}", json!({"name": name})): {".": {}, "f:image": {}, "f:name": {}}}}}}),
        );
    }
    let forgotten = "debugger-r8t5c";
    specs.push(
        json!({"name": forgotten, "image": "busybox:1.36", "stdin": true, "tty": true,
        "targetContainerName": "hello", "imagePullPolicy": "IfNotPresent",
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}),
    );
    managed.push(
        json!({"manager": "kubectl-debug", "operation": "Update", "apiVersion": "v1",
        "time": ago(3), "fieldsType": "FieldsV1", "subresource": "ephemeralcontainers",
        "fieldsV1": {"f:spec": {"f:ephemeralContainers": {
            format!("k:{}", json!({"name": forgotten})): {".": {}, "f:image": {}, "f:name": {}}}}}}),
    );
    pod["spec"]["ephemeralContainers"] = json!(specs);
    pod["status"]["ephemeralContainerStatuses"] = json!(statuses);
    pod["metadata"]["managedFields"] = json!(managed);
}

/// payments-api's distroless `api` runs as distroless's `nonroot` user
/// (65532), as its chart says: a debug container that is root without
/// SYS_PTRACE (the baseline profile its namespace enforces) cannot read
/// its files under /proc/1/root, one that takes its user can.
fn run_api_as_nonroot(pod: &mut Value) {
    if pod.pointer("/metadata/labels/app.kubernetes.io~1name") != Some(&json!("payments-api")) {
        return;
    }
    for c in pod["spec"]["containers"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        if c["name"] == "api" {
            c["securityContext"] = json!({
                "runAsUser": 65532, "runAsGroup": 65532, "runAsNonRoot": true,
            });
        }
    }
}

/// `n` pods spread over `max(1, n / 500)` namespaces, for scale tests. Their
/// containers only get processes when attached to.
///
/// Each namespace runs 97 Deployments (`svc-000` to `svc-096`) of one
/// ReplicaSet each, and their pods are named as a ReplicaSet controller
/// names them: `<deployment>-<pod-template-hash>-<5 random characters>`,
/// the hash shared by the ReplicaSet's pods.
pub fn generated(n: usize, now: Timestamp) -> impl Iterator<Item = Value> {
    let namespaces = (n / 500).max(1);
    (0..n).map(move |i| {
        let ns = format!("team-{:04}", i % namespaces);
        let app = format!("svc-{:03}", (i / namespaces) % 97);
        let spec = PodSpec {
            namespace: &ns,
            name: format!(
                "{app}-{}-{}",
                pod_template_hash(&format!("{ns}/{app}")),
                // A ReplicaSet's pod: `rand.String(5)`, here a shuffle
                // of `i` (a bijection below 27⁵: 2 654 435 761 is prime
                // to 3), so the suffixes look random and never repeat.
                name_suffix(i as u64 * 2_654_435_761 % 27u64.pow(5))
            ),
            app: &app,
            containers: if i % 3 == 0 {
                vec![
                    ("app", "ghcr.io/podbay/app:1.0"),
                    ("sidecar", "envoyproxy/envoy:v1.31.2"),
                ]
            } else {
                vec![("app", "ghcr.io/podbay/app:1.0")]
            },
            init: vec![],
            shape: if i % 97 == 13 {
                Shape::CrashLoop
            } else {
                Shape::Running
            },
            node: Some(NODES[i % NODES.len()]),
            age: SignedDuration::from_mins((i % 10_000) as i64 + 5),
            static_pod: false,
            windows: false,
            volumes: vec![],
            owner: Owned::ReplicaSet,
        };
        build(&spec, now)
    })
}

/// A ReplicaSet's `pod-template-hash` as the Deployment controller writes
/// it: `rand.SafeEncodeString` of a 32-bit FNV-1a hash in decimal (of the
/// pod template there; of `seed` here).
fn pod_template_hash(seed: &str) -> String {
    let hash = seed.bytes().fold(0x811c_9dc5u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    hash.to_string()
        .bytes()
        .map(|digit| NAME_ALPHABET[usize::from(digit) % NAME_ALPHABET.len()] as char)
        .collect()
}

/// The Pod Security labels of the demo's namespaces: `payments` enforces
/// baseline, `monitoring` restricted, and `batch` only warns at restricted.
pub fn pod_security_labels(namespace: &str) -> &'static [(&'static str, &'static str)] {
    match namespace {
        "payments" => &[("enforce", "baseline"), ("enforce-version", "latest")],
        "monitoring" => &[("enforce", "restricted"), ("enforce-version", "latest")],
        "batch" => &[("warn", "restricted"), ("warn-version", "latest")],
        _ => &[],
    }
}

/// The policy the namespace's labels make.
fn pod_security_policy(namespace: &str) -> Policy {
    let labels = pod_security_labels(namespace)
        .iter()
        .map(|(k, v)| (format!("pod-security.kubernetes.io/{k}"), v.to_string()))
        .collect();
    Policy::from_labels(&labels)
}

/// What a pod needs to meet the restricted level, as a well-kept chart
/// sets it: a non-root user for the pod, and containers that escalate
/// nothing and keep no capabilities.
fn meet_restricted(pod: &mut Value) {
    pod["spec"]["securityContext"] = json!({
        "runAsNonRoot": true, "runAsUser": 65534, "runAsGroup": 65534, "fsGroup": 65534,
        "seccompProfile": {"type": "RuntimeDefault"},
    });
    for list in ["initContainers", "containers"] {
        for c in pod["spec"][list].as_array_mut().into_iter().flatten() {
            c["securityContext"] = json!({
                "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]},
            });
        }
    }
}

/// Where ledger-worker's crashes leave core files (an emptyDir: a core
/// written inside the container would go with its restart).
pub const CRASH_DIR: &str = "/var/crash";
/// The core file the demo's crash left, as `core.%e.%p` names it.
pub const CORE_FILE: &str = "core.ledger.1";
const CORE_BYTES: usize = 24 << 20;

/// Fills a demo pod's volume, in `dir`, the first time it is made: what a
/// claim already holds, or what the pod's crashes left on an emptyDir.
pub fn seed_volume(pod: &str, volume: &Value, dir: &std::path::Path) -> std::io::Result<()> {
    let name = volume
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if let Some(claim) = volume
        .pointer("/persistentVolumeClaim/claimName")
        .and_then(Value::as_str)
    {
        for (path, content) in claim_contents(claim) {
            std::fs::write(dir.join(path), content)?;
        }
    } else if name == "crash" && pod.starts_with("ledger-worker-") {
        // An ELF core header (x86-64, ET_CORE), then the memory it holds.
        let mut header = [0u8; 64];
        header[..7].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1]);
        header[16..20].copy_from_slice(&[4, 0, 0x3e, 0]);
        header[20] = 1;
        super::workload::write_dump(&dir.join(CORE_FILE), &header, CORE_BYTES >> 20)?;
    }
    Ok(())
}

/// What a persistent volume claim of the demo already holds when its pod
/// starts: files (path in the volume, content).
fn claim_contents(claim: &str) -> Vec<(&'static str, String)> {
    match claim {
        "data-redis-0" => vec![(
            "dump.rdb",
            "REDIS0011 redis-ver 7.4.1 redis-bits 64 aof-base 0\n\
             db0 keys=3 session:8f2a41 cart:1042 rate:/v1/charges\n"
                .to_string(),
        )],
        _ => Vec::new(),
    }
}

/// What a demo container asks for and may use. The indexer's cache grows
/// toward its memory limit until the kubelet kills it (`OOMKilled`);
/// prometheus evaluates its rules flat out, held at its CPU limit.
fn resources(app: &str, container: &str) -> Value {
    match (app, container) {
        ("search-indexer", "indexer") => json!({
            "requests": {"cpu": "100m", "memory": "64Mi"},
            "limits": {"cpu": "500m", "memory": "96Mi"},
        }),
        ("prometheus", "prometheus") => json!({
            "requests": {"cpu": "25m", "memory": "32Mi"},
            "limits": {"cpu": "50m", "memory": "128Mi"},
        }),
        ("prometheus", "config-reloader") => json!({
            "requests": {"cpu": "5m", "memory": "16Mi"},
            "limits": {"cpu": "5m", "memory": "32Mi"},
        }),
        ("storefront", "web") => json!({
            "requests": {"cpu": "100m", "memory": "64Mi"},
            "limits": {"memory": "128Mi"},
        }),
        ("payments-api", "api") => json!({
            "requests": {"cpu": "250m", "memory": "128Mi"},
            "limits": {"cpu": "1", "memory": "256Mi"},
        }),
        _ => json!({}),
    }
}

/// What a demo container's process does: print a log line now and then,
/// like a service would.
fn container_command(app: &str, container: &str) -> Value {
    if (app, container) == ("prometheus", "prometheus") {
        // Busy: a rule evaluation never ends, a line now and then.
        let busy = r#"n=0; while :; do n=$((n+1)); if [ $((n % 100000)) -eq 0 ]; then echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) level=warn msg=\"rule group evaluation took longer than its interval\" evaluations=$n"; fi; done"#;
        return json!(["sh", "-c", busy]);
    }
    let line = format!(
        "n=0; while :; do n=$((n+1)); echo \"$(date -u +%Y-%m-%dT%H:%M:%SZ) {app}/{container} handled request id=$n status=200\"; sleep 5; done"
    );
    json!(["sh", "-c", line])
}

fn build(spec: &PodSpec<'_>, now: Timestamp) -> Value {
    let created = now - spec.age;
    let started = created + SignedDuration::from_secs(4);
    let ts = |t: Timestamp| t.to_string();
    let hash = spec.name.rsplit('-').nth(1).unwrap_or("0");
    let containers: Vec<Value> = spec
        .containers
        .iter()
        .map(|(name, image)| {
            let mut container = json!({
                "name": name, "image": image,
                "resources": resources(spec.app, name), "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
            });
            // A distroless or server image runs its entrypoint, and
            // declares the ports it serves.
            let image = Image::of(image);
            if matches!(image, Image::Tools) {
                container["command"] = container_command(spec.app, name);
            }
            let ports = image.service().map(super::serve::ports_of).unwrap_or(&[]);
            if !ports.is_empty() {
                container["ports"] = ports
                    .iter()
                    .map(|(name, port)| json!({"name": name, "containerPort": port, "protocol": "TCP"}))
                    .collect();
            }
            if !spec.volumes.is_empty() {
                container["volumeMounts"] = spec
                    .volumes
                    .iter()
                    .map(|v| json!({"name": v.name, "mountPath": v.path}))
                    .collect();
            }
            container
        })
        .collect();
    let init: Vec<Value> = spec
        .init
        .iter()
        .map(|(name, image)| {
            json!({
                "name": name, "image": image, "command": ["sh", "-c", "sleep 3600"],
                "resources": {}, "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
            })
        })
        .collect();
    let pod_uid = uid(&spec.name, 1);
    let salt = std::cell::Cell::new(100u64);
    let cid = || {
        salt.set(salt.get() + 1);
        format!("containerd://{}", hex_id(&spec.name, salt.get(), 64))
    };
    let running = |name: &str, image: &str, restarts: u32| {
        json!({
            "name": name, "image": image, "imageID": format!("{image}@sha256:{}", hex_id(image, 7, 64)),
            "containerID": cid(), "ready": true, "started": true, "restartCount": restarts,
            "state": {"running": {"startedAt": ts(started)}}, "lastState": {},
        })
    };
    let (phase, statuses, init_statuses, conditions_ready): (&str, Vec<Value>, Vec<Value>, bool) = match spec.shape {
        Shape::Running => (
            "Running",
            spec.containers.iter().map(|(n, i)| running(n, i, 0)).collect(),
            spec.init.iter().map(|(n, i)| terminated_ok(n, i, &cid(), created, started)).collect(),
            true,
        ),
        Shape::CrashLoop => (
            "Running",
            spec.containers
                .iter()
                .map(|(n, i)| {
                    json!({
                        "name": n, "image": i, "imageID": "", "containerID": cid(), "ready": false, "started": false,
                        "restartCount": 17,
                        "state": {"waiting": {"reason": "CrashLoopBackOff", "message": format!("back-off 5m0s restarting failed container={n} pod={}", spec.name)}},
                        "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": ts(now - SignedDuration::from_mins(3)), "finishedAt": ts(now - SignedDuration::from_mins(2)), "containerID": cid()}},
                    })
                })
                .collect(),
            vec![],
            false,
        ),
        Shape::Pending => ("Pending", vec![], vec![], false),
        Shape::Completed => (
            "Succeeded",
            spec.containers
                .iter()
                .map(|(n, i)| {
                    json!({
                        "name": n, "image": i, "imageID": "", "containerID": cid(), "ready": false, "started": false, "restartCount": 0,
                        "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": ts(started), "finishedAt": ts(started + SignedDuration::from_mins(4)), "containerID": cid()}},
                        "lastState": {},
                    })
                })
                .collect(),
            vec![],
            false,
        ),
        Shape::Failed => (
            "Failed",
            spec.containers
                .iter()
                .map(|(n, i)| {
                    json!({
                        "name": n, "image": i, "imageID": "", "containerID": cid(), "ready": false, "started": false, "restartCount": 0,
                        "state": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": ts(started), "finishedAt": ts(started + SignedDuration::from_secs(40)), "containerID": cid()}},
                        "lastState": {},
                    })
                })
                .collect(),
            vec![],
            false,
        ),
        Shape::InitRunning => (
            "Pending",
            spec.containers
                .iter()
                .map(|(n, i)| json!({"name": n, "image": i, "imageID": "", "ready": false, "started": false, "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}, "lastState": {}}))
                .collect(),
            spec.init.iter().map(|(n, i)| running(n, i, 0)).collect(),
            false,
        ),
        Shape::ImagePullBackOff => (
            "Pending",
            spec.containers
                .iter()
                .map(|(n, i)| json!({"name": n, "image": i, "imageID": "", "ready": false, "started": false, "restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff", "message": format!("Back-off pulling image {i:?}")}}, "lastState": {}}))
                .collect(),
            vec![],
            false,
        ),
    };
    let mut labels = json!({"app.kubernetes.io/name": spec.app, "pod-template-hash": hash});
    let mut annotations = json!({});
    // Every pod of a ReplicaSet names the same one (kubectl matches by uid).
    let replica_set = spec
        .name
        .rsplit_once('-')
        .map(|x| x.0)
        .unwrap_or(&spec.name);
    let mut owner = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": replica_set, "uid": uid(replica_set, 2), "controller": true, "blockOwnerDeletion": true}]);
    if spec.owner == Owned::Job {
        // A Job's pod: labelled with its Job's uid and name, as the Job
        // controller does (the old unprefixed labels too).
        let job_uid = uid(replica_set, 7);
        labels = json!({
            "app.kubernetes.io/name": spec.app,
            "batch.kubernetes.io/controller-uid": job_uid, "controller-uid": job_uid,
            "batch.kubernetes.io/job-name": replica_set, "job-name": replica_set,
        });
        owner = json!([{"apiVersion": "batch/v1", "kind": "Job", "name": replica_set, "uid": job_uid, "controller": true, "blockOwnerDeletion": true}]);
    }
    if spec.owner == Owned::DaemonSet {
        labels = json!({
            "app.kubernetes.io/name": spec.app,
            "controller-revision-hash": hex_id(replica_set, 8, 10),
            "pod-template-generation": "1",
        });
        owner = json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": replica_set, "uid": uid(replica_set, 8), "controller": true, "blockOwnerDeletion": true}]);
    }
    if spec.owner == Owned::StatefulSet {
        // A StatefulSet's pod: `<set>-<ordinal>`, labelled as its controller does.
        labels = json!({
            "app.kubernetes.io/name": spec.app,
            "controller-revision-hash": format!("{replica_set}-{}", &hex_id(replica_set, 6, 10)),
            "statefulset.kubernetes.io/pod-name": spec.name,
            "apps.kubernetes.io/pod-index": spec.name.rsplit('-').next().unwrap_or("0"),
        });
        owner = json!([{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": replica_set, "uid": uid(replica_set, 6), "controller": true, "blockOwnerDeletion": true}]);
    }
    if spec.static_pod {
        labels = json!({"component": spec.app, "tier": "control-plane"});
        annotations = json!({"kubernetes.io/config.mirror": hex_id(&spec.name, 3, 32), "kubernetes.io/config.source": "file"});
        owner = json!([{"apiVersion": "v1", "kind": "Node", "name": spec.node.unwrap_or_default(), "uid": uid(spec.node.unwrap_or_default(), 4), "controller": true}]);
    }
    let ready = if conditions_ready { "True" } else { "False" };
    let mut conditions = vec![
        json!({"type": "PodScheduled", "status": if spec.node.is_some() { "True" } else { "False" }, "lastTransitionTime": ts(created)}),
    ];
    if spec.node.is_none() {
        conditions[0]["reason"] = json!("Unschedulable");
        conditions[0]["message"] = json!(
            "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
        );
    } else {
        for t in ["Initialized", "ContainersReady", "Ready"] {
            conditions.push(json!({"type": t, "status": ready, "lastTransitionTime": ts(started)}));
        }
    }
    let index = spec
        .name
        .bytes()
        .fold(7u32, |a, b| a.wrapping_mul(31).wrapping_add(b as u32));
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": spec.name, "namespace": spec.namespace, "uid": pod_uid,
            "creationTimestamp": ts(created), "labels": labels, "ownerReferences": owner,
        },
        "spec": {
            "containers": containers,
            "restartPolicy": match spec.owner {
                Owned::Job => "Never",
                _ => "Always",
            },
            "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "schedulerName": "default-scheduler",
            "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            // Defaults the apiserver and its admission plugins always set.
            "securityContext": {},
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ],
        },
        "status": {
            "phase": phase, "conditions": conditions,
            "containerStatuses": statuses,
        },
    });
    pod["status"]["qosClass"] = json!(super::create::qos_class(&pod));
    if annotations.as_object().is_some_and(|a| !a.is_empty()) {
        pod["metadata"]["annotations"] = annotations;
    }
    if !spec.volumes.is_empty() {
        pod["spec"]["volumes"] = spec
            .volumes
            .iter()
            .map(|v| match v.claimed {
                true => json!({"name": v.name, "persistentVolumeClaim": {"claimName": format!("{}-{}", v.name, spec.name)}}),
                false => json!({"name": v.name, "emptyDir": {}}),
            })
            .collect();
    }
    if spec.node.is_none() {
        // No kubelet has the pod: nobody reports on its containers.
        if let Some(status) = pod["status"].as_object_mut() {
            status.remove("containerStatuses");
        }
    }
    if !init.is_empty() {
        pod["spec"]["initContainers"] = json!(init);
        pod["status"]["initContainerStatuses"] = json!(init_statuses);
    }
    if let Some(node) = spec.node {
        pod["spec"]["nodeName"] = json!(node);
        let host = super::nodes::internal_ip(node);
        pod["status"]["hostIP"] = json!(host);
        pod["status"]["hostIPs"] = json!([{"ip": host}]);
        pod["status"]["startTime"] = json!(ts(created));
        if phase != "Pending" || matches!(spec.shape, Shape::InitRunning) {
            let ip = format!("10.244.{}.{}", (index >> 8) % 250, 2 + index % 250);
            pod["status"]["podIP"] = json!(ip);
            pod["status"]["podIPs"] = json!([{"ip": ip}]);
        }
    }
    if spec.owner == Owned::DaemonSet {
        pod["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "linux"});
    }
    if spec.windows {
        pod["spec"]["os"] = json!({"name": "windows"});
        pod["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "windows"});
    }
    // Most namespaces (all of a generated 100 000) have no labels to read.
    let labelled = !pod_security_labels(spec.namespace).is_empty();
    if labelled {
        let policy = pod_security_policy(spec.namespace);
        if policy.enforce.level == Level::Restricted || policy.warn.level == Level::Restricted {
            meet_restricted(&mut pod);
        }
    }
    pod
}

fn terminated_ok(
    name: &str,
    image: &str,
    container_id: &str,
    created: Timestamp,
    started: Timestamp,
) -> Value {
    json!({
        "name": name, "image": image, "imageID": "", "containerID": container_id,
        "ready": true, "restartCount": 0,
        // As the kubelet writes it: the terminated state names its container too.
        "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": created.to_string(), "finishedAt": started.to_string(), "containerID": container_id}},
        "lastState": {},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;

    #[test]
    fn demo_pods_are_valid_pod_objects_with_unique_names() {
        let pods = demo(Timestamp::now());
        assert!(pods.len() >= 15);
        let mut names = std::collections::HashSet::new();
        for value in &pods {
            let pod: Pod = serde_json::from_value(value.clone()).expect("a real Pod");
            let key = (
                pod.metadata.namespace.clone().unwrap(),
                pod.metadata.name.clone().unwrap(),
            );
            assert!(names.insert(key), "duplicate pod");
            assert!(!pod.spec.unwrap().containers.is_empty());
        }
        let phases: std::collections::HashSet<_> = pods
            .iter()
            .map(|p| p["status"]["phase"].as_str().unwrap())
            .collect();
        assert!(
            phases.contains("Running")
                && phases.contains("Pending")
                && phases.contains("Succeeded")
        );
    }

    #[test]
    fn generated_pods_scale_and_stay_valid() {
        let pods: Vec<Value> = generated(2_000, Timestamp::now()).collect();
        assert_eq!(pods.len(), 2_000);
        let namespaces: std::collections::HashSet<_> = pods
            .iter()
            .map(|p| p["metadata"]["namespace"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(namespaces.len(), 4);
        let _: Pod = serde_json::from_value(pods[1234].clone()).unwrap();
        let names: std::collections::HashSet<_> = pods
            .iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 2_000, "every name differs");
        let hashes: std::collections::HashSet<_> = pods
            .iter()
            .map(|p| {
                p["metadata"]["labels"]["pod-template-hash"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(
            hashes.len(),
            4 * 97,
            "one ReplicaSet per Deployment and namespace"
        );
        let name = pods[1234]["metadata"]["name"].as_str().unwrap();
        let (replica_set, suffix) = name.rsplit_once('-').unwrap();
        assert!(
            replica_set.starts_with("svc-") && suffix.len() == 5,
            "{name}"
        );
    }
}
