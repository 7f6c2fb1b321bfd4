//! Command-line definitions.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::model::debug::{AsTargetUser, Profile};
use crate::model::owner::OwnerKind;

mod values;

#[derive(Debug, Parser)]
#[command(
    name = "podbay",
    version,
    about = "A terminal console for debugging live Kubernetes pods"
)]
pub struct Cli {
    #[command(flatten)]
    pub browse: BrowseArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags of the pod browser (`podbay` with no subcommand).
#[derive(Debug, Args)]
pub struct BrowseArgs {
    #[command(flatten)]
    pub clusters: Clusters,
    /// Namespace to show (default: the context's).
    #[arg(short, long, conflicts_with = "all_namespaces")]
    pub namespace: Option<String>,
    /// Show pods of all namespaces.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Colour theme: dark, light, high-contrast, or one in the themes directory.
    #[arg(long)]
    pub theme: Option<String>,
    /// Print the config, themes, state and log paths, and exit.
    #[arg(long)]
    pub print_paths: bool,
    /// Bring back the panes kept at the last run without asking.
    #[arg(long, conflicts_with = "no_restore")]
    pub restore: bool,
    /// Start without the panes kept at the last run (they stay kept until
    /// the workspace changes).
    #[arg(long)]
    pub no_restore: bool,
}

/// Which clusters a command reaches: the kubeconfig, and one context or
/// several.
#[derive(Debug, Clone, Default, Args)]
pub struct Clusters {
    /// Kubeconfig file (default: $KUBECONFIG, which may list several, else ~/.kube/config).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Context to use (default: the current context); several,
    /// comma-separated (a,b), reach each of those clusters, each row or
    /// line after its context.
    // ASCII: the manual page's roff takes no other.
    #[arg(long, value_name = "CONTEXT[,CONTEXT...]")]
    pub context: Option<String>,
    /// Every cluster of the kubeconfig, as if --context named them all
    /// (each API server once: its current context, else its first).
    #[arg(long, conflicts_with = "context")]
    pub all_contexts: bool,
}

impl Clusters {
    /// The clusters named ([`contexts`]): `None` is the current context.
    pub fn contexts(&self) -> Vec<Option<String>> {
        contexts(self.context.as_deref())
    }

    /// The first context named, if any: the browser's.
    pub fn first_context(&self) -> Option<String> {
        self.contexts().remove(0)
    }

    /// The other contexts whose pods the list shows beside the first's.
    pub fn other_contexts(&self) -> Vec<String> {
        self.contexts().into_iter().skip(1).flatten().collect()
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the embedded simulated cluster in the foreground.
    Sim(SimArgs),
    /// Start the embedded cluster in-process and open podbay on it.
    Demo(DemoArgs),
    /// Add an ephemeral debug container to a pod, wait for it, attach, and
    /// exit with its exit code; in many pods at once (several names, -l,
    /// deploy/NAME) with each line after its pod's name and a summary.
    Debug(Box<DebugArgs>),
    /// Copy files and directories out of a container or into it, as
    /// kubectl cp, also where the container has no tar (distroless):
    /// through a debug container that sees its files.
    Cp(Box<CpArgs>),
    /// Forward local ports to a pod, as kubectl port-forward, and keep
    /// forwarding when the pod is replaced: to another ready pod of the same
    /// owner (or the same StatefulSet ordinal when it comes back).
    PortForward(PortForwardArgs),
    /// Capture a pod's packets (or several pods', into one pcapng) to a
    /// local pcap file or stdout, with tcpdump in a debug container that
    /// ends with the capture: nothing privileged, nothing installed.
    Capture(Box<CaptureArgs>),
    /// List the debug containers of the pods in a namespace (or all), with
    /// their state, age, whether one holds a shell, and who added it.
    Debuggers(DebuggersArgs),
    /// Show the pods' CPU and memory in use, as kubectl top pod, from the
    /// cluster's metrics API (metrics-server).
    Top(TopArgs),
    /// Print a completion script: `podbay completions bash > ~/.local/share/bash-completion/completions/podbay`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `podbay man | man -l -`.
    Man,
}

/// The name podbay answers to: `kubectl podbay` when run as the kubectl
/// plugin (a `kubectl-podbay` link on the PATH), else `podbay`.
pub fn display_name(argv0: &std::ffi::OsStr) -> &'static str {
    let file = std::path::Path::new(argv0)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    if file.starts_with("kubectl-podbay") {
        "kubectl podbay"
    } else {
        "podbay"
    }
}

/// The command line, parsed under the name podbay was run as (so help and
/// usage errors read `kubectl podbay …` for the plugin).
pub fn parse() -> Cli {
    use clap::{CommandFactory as _, FromArgMatches as _};
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let name = display_name(&argv0);
    // clap's usage for an error lists the flags given, so `-n shop` without
    // a pod read as if -n were required: one synopsis, whatever was given.
    let matches = Cli::command()
        .bin_name(name)
        .mut_subcommand("debug", |debug| {
            debug.override_usage(format!(
                "{name} debug [OPTIONS] <POD>... [-- <COMMAND>...]\n       {name} debug [OPTIONS] -l <SELECTOR> [-A] [-- <COMMAND>...]"
            ))
        })
        .get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:\n  \
podbay cp shop/payments-api-7d9c:/var/dump/heap.hprof ./heap.hprof\n  \
podbay cp -c api payments-api-7d9c:/etc/payments-api ./config\n  \
podbay cp ./fix.json payments-api-7d9c:/tmp/\n  \
podbay cp payments-api-7d9c:/var/log - | tar tvf -\n\n\
How: tar in the container, as kubectl; where it has none, tar in a debug container that targets it \
(a running one of the same image and target is reused, else one is added: --image, the profile as \
podbay debug picks it), reading and writing the target's files under /proc/1/root. A container that is \
not running is reached through the volume that holds PATH, mounted in a debug container at the same path.\n\n\
A stream from the container is unpacked only if all of it stays inside the destination: no absolute \
or .. paths, no writes through symlinks, no links pointing outside, no device nodes or FIFOs, no \
control characters in names, no more than 16 times what was measured in the container; setuid and \
setgid bits are dropped. Nothing is written under the destination's name until the whole stream was good.\n\n\
Exit status: 0 copied; 1 tar in the container failed (no such file, permission denied); 2 usage; \
65 invalid (unknown container); 66 pod not found; 69 not supported (no tar and no debug container \
possible); 70 container not running; 71/72 the debug container's image or start failed; 73 cannot \
write the destination; 74 cluster unreachable; 75 the stream was cut; 76 the container sent a stream \
podbay refuses to unpack; 77 permission denied; 78 bad kubeconfig or context; 124 timed out; 130 interrupted \
(ctrl-c: what was staged locally is removed).")]
pub struct CpArgs {
    /// What to copy: [NS/]POD:PATH, a local path, or - (a tar stream on stdin).
    #[arg(value_name = "SOURCE")]
    pub source: String,
    /// Where: a local path, [NS/]POD:PATH (a trailing / puts it inside
    /// that directory), or - (a tar stream on stdout).
    #[arg(value_name = "DESTINATION")]
    pub destination: String,
    /// The container (default: the pod's default container, else its first).
    #[arg(short, long)]
    pub container: Option<String>,
    #[arg(short, long)]
    pub namespace: Option<String>,
    #[arg(long)]
    pub context: Option<String>,
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// The debug container's image where the container has no tar
    /// (default: the first of the config's debug.images, busybox:1.36).
    #[arg(long, value_parser = parse_image)]
    pub image: Option<String>,
    /// The debug container's security profile (default: as podbay debug
    /// picks it, within the namespace's Pod Security).
    #[arg(long)]
    pub profile: Option<Profile>,
    /// Run the debug container as the target's user: auto, always, never
    /// (as podbay debug's).
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub as_target_user: AsTargetUser,
    /// How long to wait for the cluster and a debug container to start.
    #[arg(long, default_value = "2m", value_parser = parse_timeout)]
    pub timeout: Duration,
    /// The most a copy out of the pod takes (500M, 10G; K, M, G, T are
    /// powers of 1024). By default 16 times the size measured in the
    /// container and at least 1 GiB more, or 4G when it cannot tell.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_size: Option<u64>,
    /// The most the whole copy may take (10m, 1h); past it, it stops as
    /// ctrl-c does (exit 124). Without it, only a stall (--stall) ends a
    /// copy that is under way.
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub max_time: Option<Duration>,
    /// Give the copy up when no byte of it moves either way for this long
    /// (pings and empty frames from the server do not count).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_timeout)]
    pub stall: Duration,
}

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:\n  \
podbay port-forward deploy/payments-api 8080\n  \
podbay port-forward -n shop redis-0 0:6379\n  \
podbay port-forward sts/redis 16379:redis\n  \
podbay port-forward -n shop svc/storefront 8080:80\n\n\
Each connection opens its own stream to the pod it reaches now. When that pod is deleted or stops \
being ready, the forward picks a Running, Ready pod of the same owner and says so (`now forwarding to \
NS/POD`); connections accepted while no pod is ready wait up to 30 s; a connection refused before \
the pod answered anything is tried again on the next pod. A pod with no owner that goes away ends \
the forward. Only TCP is forwarded, as Kubernetes does. Over the WebSocket protocol a client's \
half-close is not passed on: the pod's answer still comes back.\n\n\
Exit status: 0 stopped with ctrl-c; 1 the forward ended (its pod went away, a port could not be \
bound); 2 usage; 78 bad kubeconfig or context.")]
pub struct PortForwardArgs {
    /// POD, pod/POD, svc/NAME (its pods, each port the Service's), deploy/NAME, rs/NAME or sts/NAME.
    #[arg(value_name = "TARGET", value_parser = parse_forward_target)]
    pub target: crate::model::forward::ForwardTarget,
    /// [LOCAL:]REMOTE: REMOTE is a port number or a container port's name;
    /// LOCAL empty or 0 picks a free port (printed).
    #[arg(value_name = "[LOCAL:]REMOTE", required = true, value_parser = parse_port_mapping)]
    pub ports: Vec<crate::model::forward::PortMapping>,
    #[arg(short, long)]
    pub namespace: Option<String>,
    #[arg(long)]
    pub context: Option<String>,
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Local addresses to listen on: IPs or localhost (127.0.0.1 and ::1),
    /// comma-separated or repeated. 0.0.0.0 or :: (every interface) must
    /// be given twice.
    #[arg(long, value_delimiter = ',', default_value = "127.0.0.1")]
    pub address: Vec<String>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Ephemeral containers can never be removed from a pod: this finds the \
ones left behind. STATE is Running, Waiting with its reason, or Terminated with its reason and exit \
code; SHELL says whether it takes input (an interactive session); ADDED BY is the field manager \
that added it (podbay's own is `podbay`, kubectl's `kubectl` or `kubectl-debug`).\n\n\
Exit status: 0 listed (also when there are none); 77 the user may not list pods there; 65 the \
server refused the listing otherwise; 74 the server could not be reached; 124 it did not answer within 60 s; 78 bad kubeconfig or context."
)]
pub struct DebuggersArgs {
    #[command(subcommand)]
    pub action: Option<DebuggersAction>,
    #[arg(short, long, conflicts_with = "all_namespaces")]
    pub namespace: Option<String>,
    /// Every namespace.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Only the pods this label selector matches.
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Print the list as JSON: namespace, pod, name, image, target, state
    /// (as the API gives it), summary, startedAt, shell, addedBy, byPodbay.
    #[arg(long = "output", short = 'o', value_name = "FORMAT", value_parser = ["json"])]
    pub output: Option<String>,
    #[command(flatten)]
    pub clusters: Clusters,
}

impl DebuggersArgs {
    pub fn json(&self) -> bool {
        self.output.as_deref() == Some("json")
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Columns as kubectl top pod's: CPU in millicores (rounded up), memory in MiB. \
With -o json each pod also carries its containers, and its requests and limits (millicores, bytes; \
0 where none), read from the pods themselves."
)]
pub struct TopArgs {
    #[arg(short, long, conflicts_with = "all_namespaces")]
    pub namespace: Option<String>,
    /// Every namespace.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Only the pods this label selector matches.
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Most first by cpu or memory (else by namespace and name).
    #[arg(long, alias = "sort-by", value_name = "COLUMN", value_parser = ["cpu", "memory"])]
    pub sort: Option<String>,
    /// Print JSON: namespace, pod, cpuMillicores, memoryBytes, containers,
    /// requests and limits.
    #[arg(long = "output", short = 'o', value_name = "FORMAT", value_parser = ["json"])]
    pub output: Option<String>,
    #[command(flatten)]
    pub clusters: Clusters,
}

#[derive(Debug, Subcommand)]
pub enum DebuggersAction {
    /// Stop debug containers of a pod: their own process ends (SIGTERM,
    /// then SIGKILL), never the target's; the pod and its containers run on.
    Stop(StopDebuggersArgs),
}

#[derive(Debug, Args)]
#[command(
    after_help = "A debug container is stopped from inside: a command run in it finds the \
container's own process (the oldest of its mount namespace; the target's processes, which it sees, \
are in their own) and ends it. One with no target is the first process of a PID namespace of its \
own, which takes no signal from inside: a shell is told `exit` through its input instead, and \
anything else cannot be stopped (said, with what to do).\n\n\
Exit status: 0 all stopped (or ended already); 66 no such pod or debug container; 69 one cannot \
be stopped; 72 the stop failed in the container; 124 it did not report terminated in time; 77 \
not allowed (exec into the pod); 74 unreachable; 124 also when the server stalls past 30 s; 78 bad kubeconfig or context."
)]
pub struct StopDebuggersArgs {
    /// The pod.
    #[arg(value_name = "POD")]
    pub pod: String,
    /// The debug containers to stop (repeat, or comma-separated).
    #[arg(short = 'c', long = "container", value_name = "NAME", value_delimiter = ',',
        required_unless_present_any = ["all", "idle"], conflicts_with_all = ["all", "idle"])]
    pub containers: Vec<String>,
    /// Every running debug container of the pod.
    #[arg(long, conflicts_with = "idle")]
    pub all: bool,
    /// The running debug containers that started longer ago than this (30m, 2h).
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub idle: Option<Duration>,
    #[arg(short, long)]
    pub namespace: Option<String>,
    #[arg(long)]
    pub context: Option<String>,
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Exit status: the debug container's exit code once it has run, 0 with --no-attach or --list; \
with several pods (or -l, or an owner such as deploy/NAME) 0 if every pod's command exited 0, else 123 (some failed: the summary on stderr says which); \
podbay's own failures: 1 the attach ended with the server's error and no exit code, 2 usage, 65 invalid (422, name clash, unknown target), 66 pod not found, \
69 not supported (static pod, Windows target, no ephemeralcontainers API), 70 pod not running, \
71 image cannot be pulled, 72 container could not start, 74 cluster unreachable (after retrying \
up to --timeout), 75 the attach stream was cut while the container runs on, 77 permission denied (403/401), \
78 bad kubeconfig or context, 124 timed out, 125 an exit code outside 0-255 (said as reported).\n\n\
Without -t, the container's stdout goes to stdout and its stderr to stderr (output taken from \
its log is split the same way where the server supports stream=Stdout/Stderr, Kubernetes 1.32+; \
merged on stdout otherwise)."
)]
pub struct DebugArgs {
    /// The pod(s) to debug: NAME or pod/NAME, as kubectl takes it, an
    /// owner's pods (deploy/NAME, rs/NAME, sts/NAME, ds/NAME, job/NAME) or a
    /// Service's (svc/NAME).
    #[arg(value_name = "POD", value_parser = parse_pod, required_unless_present = "selector", conflicts_with = "selector")]
    pub pods: Vec<DebugTarget>,
    /// Debug every pod this label selector matches (as kubectl's -l).
    #[arg(short = 'l', long, value_name = "SELECTOR", value_parser = parse_selector)]
    pub selector: Option<String>,
    /// With -l: the pods of every namespace.
    #[arg(short = 'A', long, requires = "selector", conflicts_with = "namespace")]
    pub all_namespaces: bool,
    /// Namespace of the pod (default: the context's).
    #[arg(short, long)]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub clusters: Clusters,
    /// Container whose processes and filesystem (/proc/PID/root) to share;
    /// a regular or an init container (with several pods, each must have it).
    #[arg(long, conflicts_with = "target_all")]
    pub target: Option<String>,
    /// With several pods: target each pod's first container.
    #[arg(long)]
    pub target_all: bool,
    /// With several pods: how many to run at once.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub parallel: u16,
    /// Image of the debug container (default: the first of debug.images in
    /// config.toml, else busybox:1.36).
    #[arg(long, value_parser = parse_image)]
    pub image: Option<String>,
    /// Container name; default debugger-xxxxx, unique in the pod (-c as
    /// kubectl debug's --container).
    #[arg(long, short = 'c', visible_alias = "container")]
    pub name: Option<String>,
    /// Security profile, as kubectl debug: general, baseline, restricted,
    /// netadmin, sysadmin, or a team profile of config.toml's
    /// [profiles.NAME] (default: debug.profile in config.toml, else
    /// general; a profile not asked for that the namespace's Pod Security
    /// level refuses is replaced by the strongest one it admits).
    #[arg(long = "profile", value_name = "NAME", value_parser = ProfileName, hide_possible_values = true)]
    pub profile_name: Option<String>,
    /// The built-in profile `--profile` names (or a team profile's base),
    /// resolved with the config before the command runs.
    #[arg(skip)]
    pub profile: Option<Profile>,
    /// Run as the target's user (its runAsUser/runAsGroup) so its files
    /// under /proc/1/root are readable: auto (when the profile has no
    /// SYS_PTRACE, as baseline and restricted), always, or never.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub as_target_user: AsTargetUser,
    /// Environment variable for the debug container (repeatable).
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env)]
    pub env: Vec<(String, String)>,
    /// Mount one of the pod's volumes in the debug container (repeatable):
    /// its files, when the target's /proc/1/root is out of reach.
    #[arg(long = "mount", value_name = "VOLUME:PATH", value_parser = parse_mount)]
    pub mounts: Vec<(String, String)>,
    /// The debug container's working directory.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<String>,
    /// When to pull the image.
    #[arg(long, value_name = "POLICY", value_parser = ["Always", "IfNotPresent", "Never"])]
    pub pull_policy: Option<String>,
    /// Keep the container's stdin open and send podbay's standard input to it
    /// (with several pods: read to its end first, given to each, then closed).
    #[arg(short, long)]
    pub interactive: bool,
    /// Give the container a terminal (the local one goes to raw mode while
    /// attached, when it is a terminal). Without it, stdout and stderr stay apart.
    #[arg(short, long)]
    pub tty: bool,
    /// Return once the container runs, printing its name.
    #[arg(long)]
    pub no_attach: bool,
    /// Attach to a running debug container with the same image and target
    /// (mounting at least the --mount volumes) instead of adding another
    /// (they can never be removed from the pod).
    #[arg(long)]
    pub reuse: bool,
    /// List the pod's debug containers (state, image, target) and exit.
    #[arg(long, conflicts_with_all = ["reuse", "no_attach", "name", "command"])]
    pub list: bool,
    /// How long to wait for the cluster and for the container to start (30s, 2m, 1h).
    #[arg(long, default_value = "2m", value_parser = parse_timeout)]
    pub timeout: Duration,
    /// Print the final container status (or, with --list, the list) as JSON:
    /// stdout is that one document, and the container's output goes to
    /// stderr.
    #[arg(long = "output", short = 'o', value_name = "FORMAT", value_parser = ["json"])]
    pub output: Option<String>,
    /// A partial container spec (JSON or YAML) merged onto the debug container
    /// after --profile, as kubectl debug's --custom: env, securityContext,
    /// resources, volumeMounts… (not name, command, image, lifecycle or
    /// volumeDevices).
    #[arg(long, value_name = "FILE", value_parser = parse_custom)]
    pub custom: Option<CustomFile>,
    #[command(flatten)]
    pub pod_flags: DebugPodFlags,
    /// Command and arguments (after --); default: the image's entrypoint.
    #[arg(last = true)]
    pub command: Vec<String>,
    /// Without a target: the container whose user to run as (podbay cp
    /// reaching a stopped container's volumes); not a flag.
    #[arg(skip)]
    pub user_of: Option<String>,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "One pod is written as tcpdump writes it (pcap); several pods (names, -l, deploy/NAME, svc/NAME) \
into one pcapng file, an interface per pod named NAMESPACE/POD, packets in time order. \
ctrl-c, --duration or --count ends the capture: the file is complete, tcpdump has ended in every pod, \
and a summary on stderr says packets, bytes and drops per pod.\n\n\
The debug container gets NET_RAW where the namespace's Pod Security admits it (netadmin), else the \
runtime's default capabilities (baseline); under \"restricted\" nothing is created. A running debug \
container of the same image is used instead of adding one; one podbay adds ends a second after its \
capture.\n\n\
Exit status: 0 when every pod was captured; 123 when some were (the summary says which); otherwise as \
podbay debug's: 2 usage, 65 invalid, 66 not found, 69 not supported, 70 pod not running, 71 image, \
72 container could not start, 73 the file cannot be written, 74 unreachable, 77 forbidden (Pod Security \
included), 78 bad kubeconfig, 124 timed out, 128+N ended by signal N before capturing."
)]
pub struct CaptureArgs {
    /// The pod(s): NAME or pod/NAME, an owner's pods (deploy/NAME,
    /// sts/NAME, ds/NAME, rs/NAME, job/NAME) or a Service's (svc/NAME).
    #[arg(value_name = "POD", value_parser = parse_pod, required_unless_present = "selector", conflicts_with = "selector")]
    pub pods: Vec<DebugTarget>,
    /// Capture every pod this label selector matches.
    #[arg(short = 'l', long, value_name = "SELECTOR", value_parser = parse_selector)]
    pub selector: Option<String>,
    /// With -l: the pods of every namespace.
    #[arg(short = 'A', long, requires = "selector", conflicts_with = "namespace")]
    pub all_namespaces: bool,
    /// Namespace of the pods (default: the context's).
    #[arg(short, long)]
    pub namespace: Option<String>,
    /// Kubeconfig context to use (default: the current context).
    #[arg(long)]
    pub context: Option<String>,
    /// Kubeconfig file (default: $KUBECONFIG, which may list several, else ~/.kube/config).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Which packets: a BPF filter expression, as tcpdump takes it ('tcp port 8080').
    #[arg(short = 'f', long = "filter", value_name = "BPF")]
    pub filter: Option<String>,
    /// The pod's interface to capture on (any: every one, loopback too).
    #[arg(short = 'i', long, value_name = "IFACE", default_value = "any", value_parser = crate::model::capture::parse_interface)]
    pub interface: String,
    /// The file to write (never one already there), or - for stdout
    /// (wireshark -k -i -, tcpdump -r -); default: stdout when it is not
    /// a terminal.
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    pub write: Option<PathBuf>,
    /// Stop after this long (5s, 2m).
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub duration: Option<Duration>,
    /// Stop after this many packets (all pods together).
    #[arg(long, short = 'c', value_name = "N", value_parser = crate::model::capture::parse_count)]
    pub count: Option<u64>,
    /// Image with tcpdump for the debug container.
    #[arg(long, value_parser = parse_image, default_value = crate::model::capture::DEFAULT_IMAGE)]
    pub image: String,
    /// How long to wait for the cluster and for the debug containers to start.
    #[arg(long, default_value = "2m", value_parser = parse_timeout)]
    pub timeout: Duration,
}

/// `--profile NAME` of `podbay debug`: any name (a team's is resolved
/// with the config), the built-ins offered to shell completion.
#[derive(Debug, Clone, Copy)]
struct ProfileName;

impl clap::builder::TypedValueParser for ProfileName {
    type Value = String;

    fn parse_ref(
        &self,
        _: &clap::Command,
        _: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        value
            .to_str()
            .map(str::to_string)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidUtf8))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            Profile::ALL
                .into_iter()
                .map(|p| clap::builder::PossibleValue::new(p.name())),
        ))
    }
}

/// `--custom FILE`, read and checked: its name and the partial container.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomFile {
    pub name: String,
    pub container: serde_json::Value,
}

fn parse_custom(path: &str) -> Result<CustomFile, String> {
    let bytes =
        crate::local::read_state(std::path::Path::new(path), crate::local::STATE_MOST_BYTES)
            .map_err(|e| format!("cannot read {path}: {e}"))?
            .ok_or_else(|| format!("cannot read {path}: there is no such file"))?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("cannot read {path}: it is not UTF-8"))?;
    // JSON, or YAML as kubectl 1.33 takes it (JSON is YAML too, but its
    // own parser says where a JSON file is wrong).
    let container: serde_json::Value = match serde_json::from_str(&text) {
        Ok(json) => json,
        Err(json) if text.trim_start().starts_with('{') => {
            return Err(format!("{path} is not JSON ({json})"));
        }
        Err(_) => serde_saphyr::from_str(&text).map_err(|yaml| {
            // Its first line says where; the rest draws the source.
            let first = yaml
                .to_string()
                .lines()
                .next()
                .unwrap_or_default()
                .to_string();
            format!(
                "{path} is neither JSON nor YAML ({})",
                first.trim_start_matches("error: ")
            )
        })?,
    };
    let name = std::path::Path::new(path)
        .file_stem()
        .map_or_else(|| path.to_string(), |s| s.to_string_lossy().into_owned());
    crate::model::debug::CustomProfile::new(&name, Profile::General, container.clone())?;
    Ok(CustomFile { name, container })
}

impl DebugArgs {
    /// `podbay debug POD -n NAMESPACE` with every other flag at its
    /// default: what the commands that add a debug container for their
    /// own ends (cp, capture) start from.
    pub fn for_pod(pod: &str, namespace: &str, timeout: Duration) -> Self {
        DebugArgs {
            pods: vec![DebugTarget::Pod(pod.to_string())],
            selector: None,
            all_namespaces: false,
            namespace: Some(namespace.to_string()).filter(|n| !n.is_empty()),
            clusters: Clusters::default(),
            target: None,
            target_all: false,
            parallel: 1,
            image: None,
            name: None,
            profile: None,
            profile_name: None,
            as_target_user: AsTargetUser::Auto,
            env: Vec::new(),
            mounts: Vec::new(),
            workdir: None,
            pull_policy: None,
            interactive: false,
            tty: false,
            no_attach: false,
            reuse: false,
            list: false,
            timeout,
            output: None,
            custom: None,
            pod_flags: Default::default(),
            command: Vec::new(),
            user_of: None,
        }
    }

    /// `--custom`, on top of `base`.
    pub fn custom_profile(&self, base: Profile) -> Option<crate::model::debug::CustomProfile> {
        self.custom
            .as_ref()
            .map(|c| crate::model::debug::CustomProfile {
                name: c.name.clone(),
                base,
                container: c.container.clone(),
            })
    }

    pub fn json(&self) -> bool {
        self.output.as_deref() == Some("json")
    }

    /// A flag given that does nothing for a node target: a usage error,
    /// never ignored (copies refuse theirs through clap).
    pub fn inapplicable(&self) -> Option<String> {
        let contexts = self.contexts().len();
        if contexts > 1 && self.pod_flags.copy_to.is_some() {
            return Some(format!(
                "--copy-to makes one copy in one cluster, and --context names {contexts}: name one context."
            ));
        }
        let Some(DebugTarget::Node(node)) = self.pods.first() else {
            return None;
        };
        if contexts > 1 {
            return Some(format!(
                "node/{node} is one cluster's node, and --context names {contexts}: name one context."
            ));
        }
        let given = [
            ("--list", self.list),
            ("--reuse", self.reuse),
            ("--target", self.target.is_some()),
            ("--target-all", self.target_all),
            ("--mount", !self.mounts.is_empty()),
            ("-l", self.selector.is_some()),
        ];
        let flag = given.iter().find(|(_, on)| *on)?.0;
        Some(format!(
            "{flag} is for a pod's debug containers; node/{node} gets a pod of its own: remove {flag}."
        ))
    }

    /// The clusters to run in ([`contexts`]).
    pub fn contexts(&self) -> Vec<Option<String>> {
        self.clusters.contexts()
    }

    /// Several pods at once: more than one named, a selector, an owner's,
    /// or more than one cluster.
    pub fn is_fleet(&self) -> bool {
        let named: std::collections::BTreeSet<&DebugTarget> = self.pods.iter().collect();
        named.len() > 1
            || self.contexts().len() > 1
            || self.selector.is_some()
            || self
                .pods
                .iter()
                .any(|p| matches!(p, DebugTarget::Owner { .. } | DebugTarget::Service(_)))
    }
}

/// What `podbay debug` is pointed at on its command line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum DebugTarget {
    Pod(String),
    /// A pod on this node, with its namespaces and root (`node/NAME`).
    Node(String),
    /// Every pod of this workload, by its selector (as kubectl resolves it).
    Owner {
        kind: OwnerKind,
        name: String,
    },
    /// Every pod a Service selects (`svc/NAME`).
    Service(String),
}

/// The flags of debugging with a pod of podbay's own: a node's, or a copy.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DebugPodFlags {
    /// Create a copy of the pod with this name instead of adding an
    /// ephemeral container (kubectl debug's --copy-to); the container
    /// --container names runs the command (a new one with --image), and
    /// the copy is deleted when podbay exits unless --keep.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["reuse", "list", "target", "selector", "all_namespaces"])]
    pub copy_to: Option<String>,
    /// With --copy-to: the copy's containers share one process namespace
    /// (default true, as kubectl's).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", requires = "copy_to")]
    pub share_processes: Option<bool>,
    /// With --copy-to: schedule the copy on the original's node.
    #[arg(long, requires = "copy_to")]
    pub same_node: bool,
    /// With --copy-to: a container's image in the copy (NAME=IMAGE, `*`
    /// for all; repeatable).
    #[arg(long, value_name = "NAME=IMAGE", value_parser = parse_set_image, requires = "copy_to")]
    pub set_image: Vec<(String, String)>,
    /// With --copy-to: an image pull secret the copy also pulls with (a
    /// debug image from a private registry; repeatable).
    #[arg(long, value_name = "SECRET", requires = "copy_to")]
    pub pull_secret: Vec<String>,
    /// With --copy-to: delete the original pod once the copy is created.
    #[arg(long, requires = "copy_to")]
    pub replace: bool,
    /// With --copy-to: keep the original's labels (a Service may then
    /// send the copy traffic).
    #[arg(long, requires = "copy_to")]
    pub keep_labels: bool,
    #[arg(long, requires = "copy_to")]
    pub keep_annotations: bool,
    #[arg(long, requires = "copy_to")]
    pub keep_liveness: bool,
    #[arg(long, requires = "copy_to")]
    pub keep_readiness: bool,
    #[arg(long, requires = "copy_to")]
    pub keep_startup: bool,
    #[arg(long, requires = "copy_to")]
    pub keep_init_containers: bool,
    /// Node debugging and --copy-to: keep the pod podbay created when it
    /// exits (podbay says how to delete it).
    #[arg(long)]
    pub keep: bool,
}

pub use crate::model::parse_duration;
pub use values::{contexts, parse_size};
use values::{
    parse_env, parse_forward_target, parse_image, parse_mount, parse_pod, parse_port_mapping,
    parse_selector, parse_set_image, parse_timeout,
};

#[derive(Debug, Args)]
pub struct SimArgs {
    /// Address to listen on; loopback only.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Where to write the kubeconfig (contexts sim, sim-viewer, sim-dev).
    #[arg(long)]
    pub kubeconfig_out: Option<PathBuf>,
    #[command(flatten)]
    pub scenario: ScenarioArgs,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
}

#[derive(Debug, Args)]
pub struct ScenarioArgs {
    /// Generate N pods over many namespaces instead of the demo scenario.
    #[arg(long, value_name = "N")]
    pub pods: Option<usize>,
    /// Simulated image pull time, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1500)]
    pub pull_delay: u64,
    /// Restart a pod's container this many times a second, pod after pod
    /// (steady churn for soak runs).
    #[arg(long, value_name = "PER_SECOND")]
    pub churn: Option<f64>,
    /// Delete a pod that a ReplicaSet or StatefulSet owns every this long
    /// (30s, 2m), pod after pod, so that its owner replaces it: rolling
    /// workloads, for port-forwards and watches to live through.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub replace_every: Option<Duration>,
    /// Run containers as plain host processes, without Linux namespaces
    /// (no own root, PID namespace or hostname).
    #[arg(long)]
    pub no_namespaces: bool,
}

impl ScenarioArgs {
    pub fn pull_delay(&self) -> Duration {
        Duration::from_millis(self.pull_delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5d").is_err());
        // Past what a duration holds: refused, not a panic.
        assert!(parse_duration("99999999999999999999h").is_err());
    }

    #[test]
    fn debug_command_line_parses_like_kubectl_debug() {
        let cli = Cli::try_parse_from([
            "podbay",
            "debug",
            "web-1",
            "-n",
            "shop",
            "--target",
            "app",
            "--image",
            "busybox",
            "--profile",
            "restricted",
            "--env",
            "A=1",
            "-it",
            "--timeout",
            "45s",
            "-o",
            "json",
            "--",
            "sh",
            "-c",
            "echo hi",
        ])
        .unwrap();
        let Some(Command::Debug(args)) = cli.command else {
            panic!("debug")
        };
        assert_eq!(args.pods, [DebugTarget::Pod("web-1".into())]);
        assert!(!args.is_fleet());
        let twice = Cli::try_parse_from(["podbay", "debug", "web-1", "pod/web-1"]).unwrap();
        let Some(Command::Debug(twice)) = twice.command else {
            panic!("debug")
        };
        assert!(!twice.is_fleet(), "one pod named twice is one pod");
        assert_eq!(args.namespace.as_deref(), Some("shop"));
        assert_eq!(args.profile_name.as_deref(), Some("restricted"));
        assert_eq!(args.env, [("A".to_string(), "1".to_string())]);
        assert!(args.interactive && args.tty && args.json());
        assert_eq!(args.timeout, Duration::from_secs(45));
        assert_eq!(args.command, ["sh", "-c", "echo hi"]);
        // A profile's name is resolved with the config (team profiles).
        let Some(Command::Debug(named)) =
            Cli::try_parse_from(["podbay", "debug", "p", "--profile", "root"])
                .unwrap()
                .command
        else {
            panic!("debug")
        };
        assert_eq!(named.profile_name.as_deref(), Some("root"));
        assert_eq!(named.profile, None);
    }

    #[test]
    fn debug_refuses_what_cannot_work_before_anything_is_sent() {
        let parse = |extra: &[&str]| {
            let mut argv = vec!["podbay", "debug", "p"];
            argv.extend_from_slice(extra);
            Cli::try_parse_from(argv)
        };
        for bad in [
            &["--timeout", "0"][..],
            &["--timeout", "0s"],
            &["--image", "Bad Image:1"],
            &["--list", "--reuse"],
            &["-l", ""],
            &["-l", "  "],
        ] {
            let err = parse(bad).expect_err(&format!("{bad:?}"));
            assert_eq!(err.exit_code(), 2, "a usage error: {bad:?}");
        }
        let Some(Command::Debug(args)) = parse(&[]).unwrap().command else {
            panic!("debug")
        };
        assert_eq!(args.image, None, "the image may be left out");
        assert!(!args.interactive && !args.tty);
    }
}
