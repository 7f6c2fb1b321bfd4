//! Cases from the apiserver's defaulting (`pkg/apis/core/v1/defaults.go`
//! and its tests), written here as facts.

use super::*;

fn defaulted(pod: Value) -> Value {
    let mut pod = pod;
    default_pod(&mut pod);
    pod
}

#[test]
fn a_bare_pod_gets_the_apiservers_defaults() {
    let pod = defaulted(json!({"spec": {"containers": [{"name": "a", "image": "nginx"}]}}));
    let spec = &pod["spec"];
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(spec["schedulerName"], "default-scheduler");
    assert_eq!(spec["securityContext"], json!({}));
    assert_eq!(spec["terminationGracePeriodSeconds"], 30);
    assert_eq!(spec["enableServiceLinks"], true);
    let c = &spec["containers"][0];
    assert_eq!(c["imagePullPolicy"], "Always");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
}

#[test]
fn empty_and_null_fields_are_defaulted_as_absent_ones() {
    let pod = defaulted(json!({"spec": {
        "restartPolicy": "",
        "securityContext": null,
        "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "a", "image": "nginx:1.27", "imagePullPolicy": "", "terminationMessagePolicy": null}],
    }}));
    assert_eq!(pod["spec"]["restartPolicy"], "Always");
    assert_eq!(pod["spec"]["securityContext"], json!({}));
    // Zero is a value for a pointer field: the pod asked to be killed at once.
    assert_eq!(pod["spec"]["terminationGracePeriodSeconds"], 0);
    let c = &pod["spec"]["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(c["terminationMessagePolicy"], "File");
}

#[test]
fn the_pull_policy_follows_the_parsed_tag() {
    let digest = format!("sha256:{}", "a".repeat(64));
    for (image, policy) in [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        (&format!("nginx@{digest}"), "IfNotPresent"),
        // A tag beside a digest is still the tag.
        (&format!("nginx:latest@{digest}"), "Always"),
        (&format!("nginx:1.27@{digest}"), "IfNotPresent"),
        // Not a reference (a repository is lowercase): no tag.
        ("Nginx", "IfNotPresent"),
        ("", "IfNotPresent"),
        // A registry's port is not a tag.
        ("localhost:5000/x", "Always"),
        ("registry.example.com:5000/team/tools:2.1", "IfNotPresent"),
        ("Registry.Example.com/team/tools", "Always"),
    ] {
        assert_eq!(pull_policy(image), policy, "{image:?}");
    }
}

#[test]
fn a_volume_without_a_source_is_an_empty_dir() {
    let pod = defaulted(json!({"spec": {
        "containers": [{"name": "a", "image": "x"}],
        "volumes": [
            {"name": "scratch"},
            {"name": "cfg", "configMap": {"name": "c"}},
            {"name": "tok", "secret": {"secretName": "s", "defaultMode": 256}},
            {"name": "root", "hostPath": {"path": "/"}},
        ],
    }}));
    let volumes = &pod["spec"]["volumes"];
    assert_eq!(volumes[0], json!({"name": "scratch", "emptyDir": {}}));
    assert_eq!(volumes[1]["configMap"]["defaultMode"], 420);
    assert_eq!(volumes[2]["secret"]["defaultMode"], 256);
    assert_eq!(volumes[3]["hostPath"]["type"], "");
}

#[test]
fn ports_env_and_probes_are_defaulted_in_every_kind_of_container() {
    let container = json!({
        "name": "a", "image": "x:1",
        "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
        "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "livenessProbe": {"httpGet": {"port": 80}},
        "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/quit"}}},
    });
    let pod = defaulted(json!({"spec": {
        "containers": [container.clone()],
        "ephemeralContainers": [{"name": "d", "image": "busybox",
            "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}],
    }}));
    let c = &pod["spec"]["containers"][0];
    assert_eq!(c["ports"][0]["protocol"], "TCP");
    assert_eq!(c["ports"][1]["protocol"], "UDP");
    assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
    let probe = &c["livenessProbe"];
    assert_eq!(
        (
            &probe["timeoutSeconds"],
            &probe["periodSeconds"],
            &probe["successThreshold"],
            &probe["failureThreshold"]
        ),
        (&json!(1), &json!(10), &json!(1), &json!(3))
    );
    assert_eq!(probe["httpGet"]["path"], "/");
    assert_eq!(probe["httpGet"]["scheme"], "HTTP");
    assert_eq!(c["lifecycle"]["preStop"]["httpGet"]["path"], "/quit");
    assert_eq!(c["lifecycle"]["preStop"]["httpGet"]["scheme"], "HTTP");
    let d = &pod["spec"]["ephemeralContainers"][0];
    assert_eq!(d["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
    assert_eq!(d["imagePullPolicy"], "Always");
    // An ephemeral container has no resources to default.
    assert!(d.get("resources").is_none());
}

#[test]
fn limits_become_missing_requests_of_regular_and_init_containers() {
    let pod = defaulted(json!({"spec": {
        "initContainers": [{"name": "i", "image": "x", "resources": {"limits": {"cpu": "1"}}}],
        "containers": [{"name": "a", "image": "x", "resources": {
            "limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}}],
    }}));
    assert_eq!(
        pod["spec"]["initContainers"][0]["resources"]["requests"],
        json!({"cpu": "1"})
    );
    assert_eq!(
        pod["spec"]["containers"][0]["resources"]["requests"],
        json!({"cpu": "500m", "memory": "1Gi"})
    );
}

#[test]
fn host_network_pods_publish_their_container_ports() {
    let pod = defaulted(json!({"spec": {"hostNetwork": true,
        "containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 8080}]}]}}));
    assert_eq!(pod["spec"]["containers"][0]["ports"][0]["hostPort"], 8080);
}

#[test]
fn pods_tolerate_not_ready_and_unreachable_nodes_for_five_minutes() {
    let pod = defaulted(json!({"spec": {"containers": [{"name": "a", "image": "x"}],
        "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}]}}));
    let tolerations = pod["spec"]["tolerations"].as_array().unwrap();
    assert_eq!(tolerations.len(), 2);
    assert_eq!(tolerations[0]["tolerationSeconds"], 10);
    assert_eq!(tolerations[1]["key"], "node.kubernetes.io/not-ready");
    assert_eq!(tolerations[1]["tolerationSeconds"], 300);
}
