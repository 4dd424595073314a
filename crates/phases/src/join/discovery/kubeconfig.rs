//! Kubeconfig documents as `kubeadm join` handles them (upstream's `util/kubeconfig` and the parts of
//! client-go's `clientcmd` it relies on): the current cluster and user, whether the user carries
//! credentials, embedding the files a kubeconfig points to, and writing a kubeconfig back out the
//! way `clientcmd.WriteToFile` does (client-go's v1 `Config`: lists sorted by name, empty fields
//! left out as its `omitempty` tags say, `null` for an empty list).
//!
//! Documents are `serde_json::Value`s in the v1 wire shape (`clusters: [{name, cluster}]`), as the
//! YAML parser gives them.

use std::collections::BTreeMap;

use kubeadm_core::kubeconfig::{AuthInfo, Cluster, Config};
use serde_json::{Map, Value, json};

/// The named entries of a list (`clusters`, `contexts`, `users`) as client-go's map holds them: by
/// name, the last of equal names winning.
fn named<'a>(doc: &'a Value, list: &str, item: &str) -> BTreeMap<String, &'a Value> {
    doc.get(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            let name = e.get("name").and_then(Value::as_str).unwrap_or_default();
            (name.to_string(), e.get(item).unwrap_or(&Value::Null))
        })
        .collect()
}

fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Upstream's `GetClusterFromKubeConfig`: the unnamed cluster if there is one, else the current
/// context's cluster. Returns the cluster's name.
pub(crate) fn current_cluster_name(doc: &Value) -> Option<String> {
    Config::from_value(doc)
        .default_cluster()
        .map(|(name, _)| name.to_string())
}

/// The cluster [`current_cluster_name`] picks, as written in the document.
pub(crate) fn current_cluster(doc: &Value) -> Option<&Value> {
    let name = current_cluster_name(doc)?;
    named(doc, "clusters", "cluster").get(&name).copied()
}

/// The cluster [`current_cluster_name`] picks, typed (empty when there is none).
pub(crate) fn default_cluster(doc: &Value) -> Cluster {
    Config::from_value(doc)
        .default_cluster()
        .map(|(_, cluster)| cluster.clone())
        .unwrap_or_default()
}

/// A mutable reference to the named list entry's item (`cluster`, `user`), the last of equal names.
fn named_mut<'a>(doc: &'a mut Value, list: &str, item: &str, name: &str) -> Option<&'a mut Value> {
    doc.get_mut(list)?
        .as_array_mut()?
        .iter_mut()
        .rev()
        .find(|e| str_field(e, "name") == name)?
        .get_mut(item)
}

/// The current cluster, mutable.
pub(crate) fn current_cluster_mut(doc: &mut Value) -> Option<&mut Value> {
    let name = current_cluster_name(doc)?;
    named_mut(doc, "clusters", "cluster", &name)
}

/// Upstream's `getCurrentAuthInfo`: the current context's user, when both are set and exist.
fn current_user(config: &Config) -> Option<(&str, &AuthInfo)> {
    if config.current_context.is_empty() {
        return None;
    }
    let name = config.current().ok()?.auth_info.as_str();
    if name.is_empty() {
        return None;
    }
    config.current_auth_info().ok().map(|user| (name, user))
}

/// The current user, mutable.
pub(crate) fn current_user_mut(doc: &mut Value) -> Option<&mut Value> {
    let name = current_user(&Config::from_value(doc))?.0.to_string();
    named_mut(doc, "users", "user", &name)
}

/// Upstream's `HasAuthenticationCredentials`: the current user has a token or token file, a user
/// name and password, a client certificate and key, an exec plugin or an auth provider.
pub(crate) fn has_authentication_credentials(doc: &Value) -> bool {
    current_user(&Config::from_value(doc)).is_some_and(|(_, user)| user.has_credentials())
}

/// The auth provider the current user names (`Some("")` for an unnamed one), which a client made
/// from the document would have to run: client-go looks it up among its registered plugins, and
/// kubeadm registers none.
pub(crate) fn current_auth_provider(doc: &Value) -> Option<String> {
    let config = Config::from_value(doc);
    let (_, user) = current_user(&config)?;
    user.auth_provider.as_ref().map(|p| p.name.clone())
}

/// The command of the current user's exec credential plugin, which a client made from the
/// document runs to get its credentials.
pub(crate) fn current_exec_command(doc: &Value) -> Option<String> {
    let config = Config::from_value(doc);
    let (_, user) = current_user(&config)?;
    user.exec
        .as_ref()
        .map(|e| e.command.clone())
        .filter(|c| !c.is_empty())
}

/// Upstream's `CreateBasic`: one cluster, a context `<user>@<cluster>` and no users.
/// `ca_data` is the base64 of the CA bundle (empty: none).
pub(crate) fn create_basic(server: &str, cluster_name: &str, user: &str, ca_data: &str) -> Value {
    let context = format!("{user}@{cluster_name}");
    let mut cluster = Map::new();
    cluster.insert("server".into(), json!(server));
    if !ca_data.is_empty() {
        cluster.insert("certificate-authority-data".into(), json!(ca_data));
    }
    json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": cluster}],
        "contexts": [{"name": context, "context": {"cluster": cluster_name, "user": user}}],
        "current-context": context,
        "preferences": {},
        "users": [],
    })
}

/// Upstream's `CreateWithToken`: [`create_basic`] with the user authenticating by `token`.
pub(crate) fn create_with_token(
    server: &str,
    cluster_name: &str,
    user: &str,
    ca_data: &str,
    token: &str,
) -> Value {
    let mut doc = create_basic(server, cluster_name, user, ca_data);
    doc["users"] = json!([{"name": user, "user": {"token": token}}]);
    doc
}

/// client-go's `clientcmd.Validate` ([`Config::validate`]), the checks a discovery file can fail;
/// `unreadable` answers why a named file cannot be opened (`None`: it can).
pub(crate) fn validate(doc: &Value, unreadable: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
    Config::from_value(doc)
        .validate(unreadable)
        .map_err(|e| e.to_string())
}

/// Keeps only the listed keys of an object that are set (non-empty string, `true`, non-empty list or
/// map), in the order client-go's struct declares them.
fn keep(v: &Value, keys: &[&str]) -> Map<String, Value> {
    let mut out = Map::new();
    for k in keys {
        let Some(x) = v.get(*k) else { continue };
        let set = match x {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::String(s) => !s.is_empty(),
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => !o.is_empty(),
            Value::Number(_) => true,
        };
        if set {
            out.insert((*k).to_string(), x.clone());
        }
    }
    out
}

/// A client-go v1 exec config as `clientcmd.Load` then `Write` leave it: `command`, `args`, `env`
/// and `provideClusterInfo` always written, `interactiveMode` defaulted to `IfAvailable` for the
/// v1alpha1/v1beta1 plugin APIs.
fn exec_config(e: &Value) -> Value {
    let mut out = keep(e, &["apiVersion", "installHint", "interactiveMode"]);
    out.insert("command".into(), json!(str_field(e, "command")));
    for k in ["args", "env"] {
        let v = e.get(k).filter(|v| v.as_array().is_some_and(|a| !a.is_empty()));
        out.insert(k.into(), v.cloned().unwrap_or(Value::Null));
    }
    out.insert(
        "provideClusterInfo".into(),
        json!(
            e.get("provideClusterInfo")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        ),
    );
    let api = str_field(e, "apiVersion");
    if !out.contains_key("interactiveMode")
        && matches!(
            api,
            "client.authentication.k8s.io/v1beta1" | "client.authentication.k8s.io/v1alpha1"
        )
    {
        out.insert("interactiveMode".into(), json!("IfAvailable"));
    }
    Value::Object(out)
}

fn user_config(u: &Value) -> Value {
    let mut out = keep(
        u,
        &[
            "client-certificate",
            "client-certificate-data",
            "client-key",
            "client-key-data",
            "token",
            "tokenFile",
            "as",
            "as-uid",
            "as-groups",
            "as-user-extra",
            "username",
            "password",
            "extensions",
        ],
    );
    if let Some(p) = u.get("auth-provider").filter(|p| p.is_object()) {
        let config = p.get("config").filter(|c| c.is_object()).cloned();
        out.insert(
            "auth-provider".into(),
            json!({"name": str_field(p, "name"), "config": config.unwrap_or(Value::Null)}),
        );
    }
    if let Some(e) = u.get("exec").filter(|e| e.is_object()) {
        out.insert("exec".into(), exec_config(e));
    }
    Value::Object(out)
}

/// A named list as client-go writes it: sorted by name, `null` when empty.
fn write_list(doc: &Value, list: &str, item: &str, shape: &dyn Fn(&Value) -> Value) -> Value {
    let entries = named(doc, list, item);
    if entries.is_empty() {
        return Value::Null;
    }
    Value::Array(
        entries
            .into_iter()
            .map(|(name, v)| {
                let mut e = Map::new();
                e.insert("name".into(), json!(name));
                e.insert(item.into(), shape(v));
                Value::Object(e)
            })
            .collect(),
    )
}

/// The document `clientcmd.WriteToFile` would write for this kubeconfig (after `clientcmd.Load`):
/// client-go's v1 fields only, in its shape.
pub(crate) fn as_written(doc: &Value) -> Value {
    let cluster = |c: &Value| {
        let mut out = keep(
            c,
            &[
                "tls-server-name",
                "insecure-skip-tls-verify",
                "certificate-authority",
                "certificate-authority-data",
                "proxy-url",
                "extensions",
            ],
        );
        out.insert("server".into(), json!(str_field(c, "server")));
        Value::Object(out)
    };
    let context = |c: &Value| {
        let mut out = keep(c, &["namespace", "extensions"]);
        out.insert("cluster".into(), json!(str_field(c, "cluster")));
        out.insert("user".into(), json!(str_field(c, "user")));
        Value::Object(out)
    };
    let preferences = doc
        .get("preferences")
        .map(|p| keep(p, &["colors", "extensions"]))
        .unwrap_or_default();
    json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": write_list(doc, "clusters", "cluster", &cluster),
        "contexts": write_list(doc, "contexts", "context", &context),
        "current-context": str_field(doc, "current-context"),
        "preferences": preferences,
        "users": write_list(doc, "users", "user", &user_config),
    })
}

/// The kubeconfig text `clientcmd.WriteToFile` writes.
pub(crate) fn to_text(doc: &Value) -> String {
    kubeadm_yaml::to_string(&as_written(doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(yaml: &str) -> Value {
        kubeadm_yaml::parse_documents(yaml).expect("yaml")[0]
            .value
            .clone()
    }

    const TWO_CLUSTERS: &str = "apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: 'https://a:6443'}
- name: b
  cluster: {server: 'https://b:6443'}
contexts:
- name: ctx
  context: {cluster: b, user: u}
current-context: ctx
users:
- name: u
  user: {exec: {command: get-token, apiVersion: client.authentication.k8s.io/v1beta1}}
";

    #[test]
    fn current_cluster_follows_the_context_unless_one_is_unnamed() {
        let d = doc(TWO_CLUSTERS);
        assert_eq!(current_cluster_name(&d).as_deref(), Some("b"));
        let unnamed = doc(
            "clusters: [{name: '', cluster: {server: x}}, {name: b, cluster: {server: y}}]\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: b}}]",
        );
        assert_eq!(current_cluster_name(&unnamed).as_deref(), Some(""));
        assert_eq!(current_cluster_name(&doc("clusters: []")), None);
    }

    #[test]
    fn credentials_as_upstream_counts_them() {
        let with_user = |user: &str| {
            doc(&format!(
                "current-context: c\ncontexts: [{{name: c, context: {{cluster: k, user: u}}}}]\nusers: [{{name: u, user: {user}}}]"
            ))
        };
        for (user, has) in [
            ("{token: t}", true),
            ("{tokenFile: /f}", true),
            ("{username: a}", false),
            ("{username: a, password: b}", true),
            ("{client-certificate-data: x}", false),
            ("{client-certificate: c, client-key-data: k}", true),
            ("{exec: {command: c}}", true),
            ("{exec: {args: [a]}}", false),
            ("{auth-provider: {name: oidc}}", true),
            ("{}", false),
        ] {
            assert_eq!(has_authentication_credentials(&with_user(user)), has, "{user}");
        }
    }

    /// What client-go v0.25.16's `clientcmd.LoadFromFile` then `clientcmd.Write` produce for an
    /// exec-plugin kubeconfig (the expected text was printed by a four-line Go program calling
    /// exactly those two functions).
    #[test]
    fn written_as_client_go_writes_it() {
        let text = to_text(&doc(TWO_CLUSTERS));
        assert_eq!(
            text,
            "apiVersion: v1
clusters:
- cluster:
    server: https://a:6443
  name: a
- cluster:
    server: https://b:6443
  name: b
contexts:
- context:
    cluster: b
    user: u
  name: ctx
current-context: ctx
kind: Config
preferences: {}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args: null
      command: get-token
      env: null
      interactiveMode: IfAvailable
      provideClusterInfo: false
"
        );
    }

    /// Every field kind client-go keeps, sorted and defaulted as client-go v0.25.16 writes them
    /// (expected text printed by `clientcmd.LoadFromFile` + `clientcmd.Write`).
    #[test]
    fn every_field_as_client_go_writes_it() {
        let input = "apiVersion: v1
kind: Config
clusters:
- name: z
  cluster: {server: 'https://z:6443', insecure-skip-tls-verify: true, proxy-url: 'http://p', tls-server-name: 'srv'}
- name: b
  cluster: {server: 'https://b:6443', certificate-authority-data: 'QUJD'}
contexts:
- name: ctx
  context: {cluster: b, user: u, namespace: ns}
current-context: ctx
preferences: {colors: true}
users:
- name: u
  user: {auth-provider: {name: oidc}, as: admin, as-groups: [g1], username: 'usr', password: 'pw'}
- name: e
  user: {exec: {command: c, apiVersion: client.authentication.k8s.io/v1, args: [a], env: [{name: A, value: B}], provideClusterInfo: true, interactiveMode: Never, installHint: hint}}
";
        assert_eq!(
            to_text(&doc(input)),
            "apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: QUJD
    server: https://b:6443
  name: b
- cluster:
    insecure-skip-tls-verify: true
    proxy-url: http://p
    server: https://z:6443
    tls-server-name: srv
  name: z
contexts:
- context:
    cluster: b
    namespace: ns
    user: u
  name: ctx
current-context: ctx
kind: Config
preferences:
  colors: true
users:
- name: e
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      args:
      - a
      command: c
      env:
      - name: A
        value: B
      installHint: hint
      interactiveMode: Never
      provideClusterInfo: true
- name: u
  user:
    as: admin
    as-groups:
    - g1
    auth-provider:
      config: null
      name: oidc
    password: pw
    username: usr
"
        );
    }

    /// client-go v0.25.16's `clientcmd.Validate` on each document (expected texts printed by it).
    #[test]
    fn validation_as_client_go_words_it() {
        let unreadable = |p: &str| Some(format!("open {p}: no such file or directory"));
        for (yaml, expected) in [
            (
                "clusters: [{name: '', cluster: {server: 'https://x'}}]\ncontexts: [{name: joining, context: {cluster: '', user: joiner}}]\ncurrent-context: joining\nusers: [{name: joiner, user: {token: t}}]",
                "invalid configuration: cluster was not specified for context \"joining\"",
            ),
            (
                "clusters: [{name: c, cluster: {server: 'https://x'}}]\ncurrent-context: missing",
                "invalid configuration: context was not found for specified context: missing",
            ),
            (
                "clusters: [{name: c, cluster: {certificate-authority: /nonexistent/ca.crt, server: 'https://x'}}]",
                "invalid configuration: unable to read certificate-authority /nonexistent/ca.crt for c due to open /nonexistent/ca.crt: no such file or directory",
            ),
            (
                "clusters: [{name: c, cluster: {server: 'https://x'}}]\ncontexts: [{name: k, context: {cluster: c, user: u}}]\ncurrent-context: k\nusers: [{name: u, user: {exec: {command: c, apiVersion: client.authentication.k8s.io/v1}}}]",
                "invalid configuration: interactiveMode must be specified for u to use exec authentication plugin",
            ),
            (
                "clusters: [{name: c, cluster: {server: 'https://x'}}]\ncontexts: [{name: k, context: {cluster: c, user: u}}]\ncurrent-context: k\nusers: [{name: u, user: {token: t, username: 'a', password: 'b'}}]",
                "invalid configuration: more than one authentication method found for u; found [token basicAuth], only one is allowed",
            ),
            (
                "clusters: [{name: c, cluster: {insecure-skip-tls-verify: true}}]",
                "invalid configuration: no server found for cluster \"c\"",
            ),
        ] {
            assert_eq!(
                validate(&doc(yaml), &unreadable),
                Err(expected.to_string()),
                "{yaml}"
            );
        }
        assert_eq!(validate(&doc(TWO_CLUSTERS), &unreadable), Ok(()));
    }
}
