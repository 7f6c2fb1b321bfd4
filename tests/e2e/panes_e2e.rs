//! Panes end to end: the real `podbay` in a PTY against the simulator,
//! driven with the prefix key and read off the screen.

use crate::support;

use std::time::Duration;

use support::{
    PodbayScreen, args, exits_cleanly, kubeconfig, launch_on_redis, pane_text, shell_pid, start_sim,
};

/// ctrl-b, then `key`.
async fn pane_command(screen: &PodbayScreen, key: &str) {
    screen.raw(b"\x02").await;
    screen.keys(key).await;
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

async fn quit(screen: &mut PodbayScreen) {
    pane_command(screen, "d").await;
    screen.quit().await;
    exits_cleanly(screen).await;
}

/// Opens pod `name` (namespace shop) from the pod list and a shell in its
/// `nth` container (0-based, in the pod view's order).
pub(crate) async fn shell_in(screen: &PodbayScreen, name: &str, nth: usize) {
    support::open_pod(screen, name).await;
    screen.keys(&"j".repeat(nth)).await;
    screen.keys("s").await;
    screen
        .wait_for("a shell", |t| {
            t.contains("shell shop/") && t.contains("● attached")
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_panes_share_one_debug_container_and_either_can_type() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "shared");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 140, 36);
    launch_on_redis(&screen).await;
    screen
        .wait_for("an attached shell", |t| t.contains("● attached"))
        .await;

    // Split: the new pane shows the same terminal, and says it is shared.
    pane_command(&screen, "|").await;
    screen
        .wait_for("two panes on one terminal", |t| {
            count(t, "debug shop/redis-0/debugger-") == 2 && t.contains("shared ×2")
        })
        .await;
    screen.keys("echo right-$((6*7))\r").await;
    screen
        .wait_for("the output in both panes", |t| count(t, "right-42") >= 2)
        .await;

    // Focus the left pane and type there: both panes show it too.
    pane_command(&screen, "h").await;
    screen.keys("echo left-$((7*7))\r").await;
    screen
        .wait_for("the left pane's output in both", |t| {
            count(t, "left-49") >= 2
        })
        .await;
    quit(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broadcast_types_into_two_containers_at_once_and_only_while_marked() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "broadcast");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 140, 36);
    shell_in(&screen, "redis-0", 1).await;
    // Back to the browser, on to another pod: its shell splits the workspace.
    pane_command(&screen, "d").await;
    screen.raw(b"\x1b").await;
    screen.raw(b"\x1b").await;
    shell_in(&screen, "cart", 0).await;
    screen
        .wait_for("two shells", |t| {
            t.contains("shell shop/redis-0/redis") && t.contains("shell shop/cart")
        })
        .await;

    pane_command(&screen, "S").await;
    screen
        .wait_for("the broadcast indicator", |t| {
            t.contains("BROADCAST to 2 panes") && count(t, "⚑ BROADCAST") == 3
        })
        .await;
    screen.keys("echo cast-$((6*7))\r").await;
    screen
        .wait_for("the command run in both shells", |t| {
            count(t, "cast-42") >= 2
        })
        .await;

    pane_command(&screen, "S").await;
    screen
        .wait_for("broadcast off", |t| !t.contains("BROADCAST"))
        .await;
    screen.keys("echo solo-$((5*5))\r").await;
    screen
        .wait_for("the focused shell's output", |t| t.contains("solo-25"))
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        count(&screen.text(), "solo-25"),
        1,
        "unmarked: only the focused shell ran it"
    );
    quit(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resizing_the_terminal_or_splitting_changes_stty_size() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "resize");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 36);
    shell_in(&screen, "redis-0", 1).await;
    // 120×36 minus the header, two footer lines and the pane border.
    screen.keys("echo size-$(stty size)\r").await;
    screen
        .wait_for("the first size", |t| t.contains("size-31 118"))
        .await;

    screen.resize(100, 30);
    // podbay's own redraw: a pane border closing at the 100th column (the
    // old 120-column frame, cut by the emulator, ends in `─`).
    screen
        .wait_for("the redraw at the new size", |t| {
            t.lines().count() == 30
                && t.lines().any(|l| {
                    let l = l.trim_end();
                    l.chars().count() == 100 && l.ends_with('┐')
                })
        })
        .await;
    screen.keys("clear; echo size-$(stty size)\r").await;
    screen
        .wait_for("the size after resizing", |t| t.contains("size-25 98"))
        .await;

    // A split halves the width: 100 columns, two bordered panes of 50.
    pane_command(&screen, "|").await;
    screen
        .wait_for("a second shell", |t| {
            count(t, "shell shop/redis-0/redis") == 2
        })
        .await;
    pane_command(&screen, "h").await;
    screen.keys("clear; echo size-$(stty size)\r").await;
    screen
        .wait_for("the size after splitting", |t| t.contains("size-25 48"))
        .await;
    quit(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn less_takes_the_alternate_screen_and_gives_it_back() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "less");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 36);
    shell_in(&screen, "redis-0", 1).await;
    screen.keys("echo before-less\r").await;
    screen
        .wait_for("the marker", |t| {
            t.lines().any(|l| pane_text(l) == "before-less")
        })
        .await;
    screen.keys("seq 1 200 | less\r").await;
    screen
        .wait_for("less showing the numbers", |t| {
            let lines: Vec<&str> = t.lines().map(pane_text).collect();
            lines.contains(&"1") && lines.contains(&"30") && !lines.contains(&"before-less")
        })
        .await;
    screen.quit().await;
    screen
        .wait_for("the shell's screen back", |t| {
            let lines: Vec<&str> = t.lines().map(pane_text).collect();
            lines.contains(&"before-less") && !lines.contains(&"30")
        })
        .await;
    screen.keys("echo after-$((1+1))\r").await;
    screen
        .wait_for("the shell answering", |t| t.contains("after-2"))
        .await;
    quit(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_timeout_is_repaired_once_by_itself_then_offers_r() {
    let sim = start_sim(0).await;
    sim.set_stream_idle_timeout(Some(Duration::from_secs(3)));
    let config = kubeconfig(&sim, "idle");
    let mut screen = PodbayScreen::spawn_with_config(
        &args(&config, &["-n", "shop"]),
        120,
        36,
        "[terminal]\nkeepalive = 0\nreattach_when_idle = 1\n",
    );
    launch_on_redis(&screen).await;
    screen
        .wait_for("an attached shell", |t| t.contains("● attached"))
        .await;
    let first = shell_pid(&screen, "first-").await;

    // Nothing crosses the stream: the "load balancer" cuts it; podbay
    // re-attaches by itself and says so.
    screen
        .wait_for("the automatic re-attach notice", |t| {
            t.contains("re-attached automatically") && t.contains("● attached")
        })
        .await;
    assert_eq!(shell_pid(&screen, "second-").await, first, "the same shell");

    // Typing re-arms the repair once; a second idle cut with no typing in
    // between is left to the user.
    screen
        .wait_for("the next idle repair", |t| {
            t.contains("re-attached automatically")
        })
        .await;
    screen
        .wait_for("the disconnect line after the second cut", |t| {
            t.contains("r to reattach")
        })
        .await;
    screen.keys("r").await;
    screen
        .wait_for("attached again", |t| t.contains("● attached"))
        .await;
    quit(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keepalive_pings_hold_an_idle_stream_open() {
    let sim = start_sim(0).await;
    sim.set_stream_idle_timeout(Some(Duration::from_secs(2)));
    let config = kubeconfig(&sim, "keepalive");
    let mut screen = PodbayScreen::spawn_with_config(
        &args(&config, &["-n", "shop"]),
        120,
        36,
        "[terminal]\nkeepalive = 1\nreattach_when_idle = 0\n",
    );
    launch_on_redis(&screen).await;
    screen
        .wait_for("an attached shell", |t| t.contains("● attached"))
        .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let text = screen.text();
    assert!(
        text.contains("● attached") && !text.contains("disconnected"),
        "still attached after 5 idle seconds:\n{text}"
    );
    screen.keys("echo alive-$((2*21))\r").await;
    screen
        .wait_for("the shell answering", |t| t.contains("alive-42"))
        .await;
    quit(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_writes_a_private_asciicast_of_the_pane() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "record");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 36);
    shell_in(&screen, "redis-0", 1).await;
    pane_command(&screen, ":").await;
    screen.keys("record\r").await;
    screen
        .wait_for("the recording notice", |t| {
            t.contains("● REC") && t.contains("Recording shop/redis-0/redis to")
        })
        .await;
    screen.keys("echo taped-$((3*3))\r").await;
    screen
        .wait_for("the output", |t| t.contains("taped-9"))
        .await;
    pane_command(&screen, ":").await;
    screen.keys("record\r").await;
    screen
        .wait_for("the recording saved", |t| t.contains("Recording saved"))
        .await;

    let dir = screen
        .home()
        .join("state")
        .join("podbay")
        .join("recordings");
    let file = std::fs::read_dir(&dir)
        .expect("the recordings directory")
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "cast"))
        .expect("a .cast file")
        .path();
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "only the user may read a recording");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["version"], 2);
    assert_eq!(
        (header["width"].as_u64(), header["height"].as_u64()),
        (Some(118), Some(31))
    );
    let output: String = lines
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e[1] == "o")
        .filter_map(|e| e[2].as_str().map(str::to_string))
        .collect();
    assert!(output.contains("taped-9"), "{output}");
    quit(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_deleted_under_its_pane_says_so_and_the_app_goes_on() {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Api, DeleteParams};
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "deleted");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 36);
    shell_in(&screen, "cart", 0).await;
    let pods: Api<Pod> = Api::namespaced(support::client(&sim, "sim").await, "shop");
    let name = pods
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .find(|n| n.starts_with("cart"))
        .unwrap();
    pods.delete(&name, &DeleteParams::default()).await.unwrap();
    screen
        .wait_for("the pane saying the pod is gone", |t| {
            t.contains(&format!("the pod shop/{name} was deleted"))
        })
        .await;
    // The pane closes without a question; the browser is still live.
    screen.keys("x").await;
    screen
        .wait_for("the browser", |t| {
            t.contains("redis-0") || t.contains("filter cart")
        })
        .await;
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_ends_with_its_last_lines_on_screen_and_above_them() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "flood");
    let mut screen = PodbayScreen::spawn_with_env(
        &args(&config, &["-n", "shop"]),
        100,
        30,
        "",
        &[("PODBAY_LOG", "info,podbay::tui::session_task=debug")],
    );
    shell_in(&screen, "redis-0", 1).await;
    // Far more lines than a pane keeps (10 000 of scrollback): those that
    // would scroll out unseen need not be drawn, but every line the pane
    // keeps must be there, in order.
    screen.keys("seq 1 300000; echo flood-$((6*7))\r").await;
    screen
        .wait_for_within(120, "the end of the flood", |t| {
            t.lines().any(|l| pane_text(l) == "flood-42")
        })
        .await;
    let numbers = |text: &str| -> Vec<u64> {
        text.lines()
            .filter_map(|l| pane_text(l).parse().ok())
            .collect()
    };
    let in_order = |n: &[u64]| n.windows(2).all(|w| w[1] == w[0] + 1);
    let shown = numbers(&screen.text());
    assert!(
        shown.ends_with(&[299_999, 300_000]) && in_order(&shown),
        "the last lines, in order: {shown:?}\n{}",
        screen.text()
    );
    // Back into the scrollback, half a page at a time (shift-pgup).
    for _ in 0..4 {
        screen.raw(b"\x1b[5;2~").await;
    }
    let top = shown[0];
    screen
        .wait_for("the lines above, from the scrollback", |t| {
            let above = numbers(t);
            above.first().is_some_and(|first| *first < top - 30) && in_order(&above)
        })
        .await;
    // The flood was held back from the pane and most of it never parsed.
    let left_out: u64 = logs_under(screen.home())
        .iter()
        .flat_map(|text| text.lines())
        .filter_map(|line| {
            let (_, after) = line.split_once("lines left out unseen (")?;
            after.split_once(" in all")?.0.parse().ok()
        })
        .max()
        .unwrap_or(0);
    assert!(
        left_out > 100_000,
        "most of 300 000 lines were left out: {left_out}"
    );
    quit(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

/// The text of every log file under `home`.
fn logs_under(home: &std::path::Path) -> Vec<String> {
    let mut texts = Vec::new();
    let mut dirs = vec![home.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "log") {
                texts.extend(std::fs::read_to_string(&path).ok());
            }
        }
    }
    texts
}
