use super::*;

#[test]
fn command_line_follows_runtime_rules() {
    let tools = Image::Tools;
    assert_eq!(command_line(&json!({}), &tools), ["sh"]);
    let distroless = Image::of("gcr.io/distroless/payments-api:3.2.0");
    assert_eq!(command_line(&json!({}), &distroless), ["/app/payments-api"]);
    assert_eq!(
        command_line(&json!({"args": ["echo", "hi"]}), &tools),
        ["echo", "hi"]
    );
    assert_eq!(
        command_line(
            &json!({"command": ["sh", "-c"], "args": ["exit 3"]}),
            &tools
        ),
        ["sh", "-c", "exit 3"]
    );
}
