//! Errors of the API client told without the secrets the documents they come from hold.
//!
//! kube's YAML library renders a parse error with a snippet of the source around the place: for a
//! malformed kubeconfig, the lines of `client-key-data` or `token` before it; for an exec plugin's
//! output that does not parse, its token. [`describe`] tells such an error by its place (line and
//! column) and message alone, with any quoted value in the message left out, and an exec plugin
//! that failed by its command and exit status (not its output). Every other error is told with its
//! chain of causes.

use std::error::Error;

use kube::client::AuthError;
use kube::config::KubeconfigError;

/// `error` and its causes, `: `-joined, with no snippet of a document and no value from one.
pub(crate) fn describe(error: &(dyn Error + 'static)) -> String {
    // The first cause that carries a document's text is told alone: the errors above it repeat
    // its text in their own.
    let mut cause = Some(error);
    let mut above = Vec::new();
    while let Some(e) = cause {
        if let Some(safe) = without_document(e) {
            above.push(safe);
            return join(above);
        }
        above.push(own_text(e));
        cause = e.source();
    }
    chain(error)
}

/// The text of one error that may hold a document's text, told without it.
fn without_document(error: &(dyn Error + 'static)) -> Option<String> {
    if let Some(e) = error.downcast_ref::<KubeconfigError>() {
        return match e {
            KubeconfigError::Parse(inner) => Some(format!(
                "failed to parse kubeconfig YAML: {}",
                yaml_error(
                    inner.location().map(|l| (l.line(), l.column())),
                    &inner.without_snippet().to_string()
                )
            )),
            _ => None,
        };
    }
    if let Some(e) = error.downcast_ref::<AuthError>() {
        return match e {
            AuthError::AuthExecParse(inner) => Some(format!(
                "failed to parse auth exec output: {}",
                yaml_error(
                    inner.location().map(|l| (l.line(), l.column())),
                    &inner.without_snippet().to_string()
                )
            )),
            // Its output may hold the credential it was about to give.
            AuthError::AuthExecRun { cmd, out } => Some(format!(
                "auth exec command '{cmd}' failed with status {}",
                out.status
            )),
            _ => None,
        };
    }
    if let Some(kube::Error::Auth(inner)) = error.downcast_ref::<kube::Error>() {
        return without_document(inner).map(|safe| format!("auth error: {safe}"));
    }
    None
}

/// What an error says of itself, before the text of the cause it quotes (the part of its message
/// that precedes `: ` and its cause's text), or all of it.
fn own_text(error: &(dyn Error + 'static)) -> String {
    let text = error.to_string();
    match error.source().map(|s| s.to_string()) {
        Some(cause) if !cause.is_empty() => match text.find(&cause) {
            Some(at) => text[..at].trim_end_matches([':', ' ']).to_string(),
            None => text,
        },
        _ => text,
    }
}

fn join(parts: Vec<String>) -> String {
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
}

/// An error and its sources, `: `-joined (hyper's errors say little at the top level).
fn chain(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let s = e.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        source = e.source();
    }
    text
}

/// A YAML error as `line L, column C: message`: `rendered` is the library's text without its
/// snippet (its first line, without the place it names before or after the message), with
/// every quoted value (`"…"`, `` `…` ``) in it replaced by `…`.
fn yaml_error(location: Option<(u64, u64)>, rendered: &str) -> String {
    let first = rendered.lines().next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let message = match first.split_once(": ") {
        Some((place, rest)) if place.starts_with("line ") => rest,
        _ => first,
    };
    match location {
        Some((line, column)) => {
            let message = message
                .strip_suffix(&format!(" at line {line}, column {column}"))
                .unwrap_or(message);
            format!("line {line}, column {column}: {}", without_quoted(message))
        }
        None => without_quoted(message),
    }
}

/// `text` with what it quotes (between `"` or backticks) replaced by `…`.
fn without_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut open: Option<char> = None;
    for c in text.chars() {
        match open {
            Some(q) if c == q => {
                out.push(c);
                open = None;
            }
            Some(_) => {}
            None if c == '"' || c == '`' => {
                out.push(c);
                out.push('…');
                open = Some(c);
            }
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "S0tLS0tLS0tLS0tLS0tLS0tLS0srHpbdl9bm168px0NAkZfQWxhZGRpbkFuZFRoZUxhbXA";

    fn kubeconfig(tail: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    client-key-data: {KEY}\n{tail}"
        )
    }

    #[test]
    fn a_malformed_kubeconfig_is_told_by_its_place_without_the_key() {
        let e =
            kube::config::Kubeconfig::from_yaml(&kubeconfig("   bad: indentation\n")).expect_err("malformed");
        // The library's own text shows the key's line.
        assert!(e.to_string().contains(&KEY[..20]), "{e}");
        let text = describe(&e);
        assert_eq!(
            text,
            "failed to parse kubeconfig YAML: line 7, column 4: while parsing a block mapping, \
             did not find expected key"
        );
    }

    #[test]
    fn values_in_messages_are_left_out() {
        let e = kube::config::Kubeconfig::from_yaml(&kubeconfig("    token: [1]\n")).expect_err("wrong type");
        let text = describe(&e);
        assert!(!text.contains(&KEY[..8]), "{text}");
        assert!(
            text.starts_with("failed to parse kubeconfig YAML: line "),
            "{text}"
        );
        let e = kube::config::Kubeconfig::from_yaml(&kubeconfig(&format!("    username: {{{KEY}: 1}}\n")))
            .expect_err("wrong type");
        let text = describe(&e);
        assert!(!text.contains(&KEY[..8]), "{text}");
        assert_eq!(
            without_quoted("invalid type: string \"abc\", expected `x`"),
            "invalid type: string \"…\", expected `…`"
        );
    }

    #[test]
    fn exec_plugin_output_is_told_without_it() {
        let kube::config::KubeconfigError::Parse(inner) =
            kube::config::Kubeconfig::from_yaml(&kubeconfig("   bad: indentation\n")).expect_err("malformed")
        else {
            panic!("not a parse error");
        };
        let e = kube::Error::Service(Box::new(AuthError::AuthExecParse(inner)));
        assert!(chain(&e).contains(&KEY[..20]), "{}", chain(&e));
        assert_eq!(
            describe(&e),
            "ServiceError: failed to parse auth exec output: line 7, column 4: while parsing a block \
             mapping, did not find expected key"
        );
    }
}
