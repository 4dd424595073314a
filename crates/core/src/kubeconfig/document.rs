//! A kubeconfig file as a typed document: client-go's `clientcmd/api/v1` `Config` with its named
//! clusters, contexts and users, read from the JSON value the YAML parser gives, and the one lookup
//! of the current context's cluster and user every reader of a kubeconfig shares.
//!
//! Reading is tolerant, as kubeadm's readers have always been: unknown fields are ignored, and a
//! field that is missing or of the wrong type reads as empty (an empty string, `false`, no entries).
//! Lists keep the file's order; a lookup by name finds the last entry of that name, as client-go's
//! maps hold them.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer};
use serde_json::Value;

/// Reads a field as `T`, or `T`'s default when it is missing or of another type.
fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let v = Value::deserialize(d)?;
    Ok(T::deserialize(v).unwrap_or_default())
}

/// Reads a list, each entry of another shape reading as the default entry; anything but a list
/// reads as no entries.
fn lenient_list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => items
            .into_iter()
            .map(|v| T::deserialize(v).unwrap_or_default())
            .collect(),
        _ => Vec::new(),
    })
}

/// A kubeconfig file (client-go's v1 `Config`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Config {
    /// `kind` (`Config`).
    #[serde(deserialize_with = "lenient")]
    pub kind: String,
    /// `apiVersion` (`v1`).
    #[serde(rename = "apiVersion", deserialize_with = "lenient")]
    pub api_version: String,
    /// `preferences`.
    #[serde(deserialize_with = "lenient")]
    pub preferences: Preferences,
    /// `clusters`, in the file's order.
    #[serde(deserialize_with = "lenient_list")]
    pub clusters: Vec<NamedCluster>,
    /// `users`, in the file's order.
    #[serde(rename = "users", deserialize_with = "lenient_list")]
    pub auth_infos: Vec<NamedAuthInfo>,
    /// `contexts`, in the file's order.
    #[serde(deserialize_with = "lenient_list")]
    pub contexts: Vec<NamedContext>,
    /// `current-context`: the name of the context in use (empty: none).
    #[serde(rename = "current-context", deserialize_with = "lenient")]
    pub current_context: String,
    /// `extensions`.
    #[serde(deserialize_with = "lenient_list")]
    pub extensions: Vec<NamedExtension>,
}

/// `preferences`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Preferences {
    /// `colors`.
    #[serde(deserialize_with = "lenient")]
    pub colors: bool,
    /// `extensions`.
    #[serde(deserialize_with = "lenient_list")]
    pub extensions: Vec<NamedExtension>,
}

/// One entry of `clusters`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct NamedCluster {
    /// `name`.
    #[serde(deserialize_with = "lenient")]
    pub name: String,
    /// `cluster`.
    #[serde(deserialize_with = "lenient")]
    pub cluster: Cluster,
}

/// How to reach a cluster (client-go's v1 `Cluster`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Cluster {
    /// `server`: the API server URL.
    #[serde(deserialize_with = "lenient")]
    pub server: String,
    /// `tls-server-name`.
    #[serde(rename = "tls-server-name", deserialize_with = "lenient")]
    pub tls_server_name: String,
    /// `insecure-skip-tls-verify`.
    #[serde(rename = "insecure-skip-tls-verify", deserialize_with = "lenient")]
    pub insecure_skip_tls_verify: bool,
    /// `certificate-authority`: a CA bundle file.
    #[serde(rename = "certificate-authority", deserialize_with = "lenient")]
    pub certificate_authority: String,
    /// `certificate-authority-data`: the CA bundle, base64 as in the file.
    #[serde(rename = "certificate-authority-data", deserialize_with = "lenient")]
    pub certificate_authority_data: String,
    /// `proxy-url`.
    #[serde(rename = "proxy-url", deserialize_with = "lenient")]
    pub proxy_url: String,
    /// `extensions`.
    #[serde(deserialize_with = "lenient_list")]
    pub extensions: Vec<NamedExtension>,
}

/// One entry of `contexts`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct NamedContext {
    /// `name`.
    #[serde(deserialize_with = "lenient")]
    pub name: String,
    /// `context`.
    #[serde(deserialize_with = "lenient")]
    pub context: Context,
}

/// A cluster, a user and a namespace (client-go's v1 `Context`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Context {
    /// `cluster`: the name of the cluster.
    #[serde(deserialize_with = "lenient")]
    pub cluster: String,
    /// `user`: the name of the user (client-go's `AuthInfo`).
    #[serde(rename = "user", deserialize_with = "lenient")]
    pub auth_info: String,
    /// `namespace`.
    #[serde(deserialize_with = "lenient")]
    pub namespace: String,
    /// `extensions`.
    #[serde(deserialize_with = "lenient_list")]
    pub extensions: Vec<NamedExtension>,
}

/// One entry of `users`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct NamedAuthInfo {
    /// `name`.
    #[serde(deserialize_with = "lenient")]
    pub name: String,
    /// `user`.
    #[serde(rename = "user", deserialize_with = "lenient")]
    pub auth_info: AuthInfo,
}

/// How a user authenticates (client-go's v1 `AuthInfo`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AuthInfo {
    /// `client-certificate`: a certificate file.
    #[serde(rename = "client-certificate", deserialize_with = "lenient")]
    pub client_certificate: String,
    /// `client-certificate-data`: the certificate, base64 as in the file.
    #[serde(rename = "client-certificate-data", deserialize_with = "lenient")]
    pub client_certificate_data: String,
    /// `client-key`: a key file.
    #[serde(rename = "client-key", deserialize_with = "lenient")]
    pub client_key: String,
    /// `client-key-data`: the key, base64 as in the file.
    #[serde(rename = "client-key-data", deserialize_with = "lenient")]
    pub client_key_data: String,
    /// `token`: a bearer token.
    #[serde(deserialize_with = "lenient")]
    pub token: String,
    /// `tokenFile`: a file holding the bearer token.
    #[serde(rename = "tokenFile", deserialize_with = "lenient")]
    pub token_file: String,
    /// `as`: the user to impersonate.
    #[serde(rename = "as", deserialize_with = "lenient")]
    pub impersonate: String,
    /// `as-uid`.
    #[serde(rename = "as-uid", deserialize_with = "lenient")]
    pub impersonate_uid: String,
    /// `as-groups`.
    #[serde(rename = "as-groups", deserialize_with = "lenient")]
    pub impersonate_groups: Vec<String>,
    /// `as-user-extra`.
    #[serde(rename = "as-user-extra", deserialize_with = "lenient")]
    pub impersonate_user_extra: BTreeMap<String, Vec<String>>,
    /// `username` (basic authentication).
    #[serde(deserialize_with = "lenient")]
    pub username: String,
    /// `password` (basic authentication).
    #[serde(deserialize_with = "lenient")]
    pub password: String,
    /// `auth-provider`, when it is a mapping.
    #[serde(rename = "auth-provider", deserialize_with = "lenient")]
    pub auth_provider: Option<AuthProviderConfig>,
    /// `exec`, when it is a mapping.
    #[serde(deserialize_with = "lenient")]
    pub exec: Option<ExecConfig>,
    /// `extensions`.
    #[serde(deserialize_with = "lenient_list")]
    pub extensions: Vec<NamedExtension>,
}

impl AuthInfo {
    /// Upstream's `HasAuthenticationCredentials` for this user: a token or token file, a user name
    /// and password, a client certificate and key, an exec plugin command or an auth provider name.
    pub fn has_credentials(&self) -> bool {
        let set = |s: &str| !s.is_empty();
        set(&self.token)
            || set(&self.token_file)
            || (set(&self.username) && set(&self.password))
            || ((set(&self.client_certificate) || set(&self.client_certificate_data))
                && (set(&self.client_key) || set(&self.client_key_data)))
            || self.exec.as_ref().is_some_and(|e| set(&e.command))
            || self.auth_provider.as_ref().is_some_and(|p| set(&p.name))
    }
}

/// `auth-provider` (client-go's v1 `AuthProviderConfig`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AuthProviderConfig {
    /// `name`.
    #[serde(deserialize_with = "lenient")]
    pub name: String,
    /// `config`.
    #[serde(deserialize_with = "lenient")]
    pub config: BTreeMap<String, String>,
}

/// `exec`: a credential plugin (client-go's v1 `ExecConfig`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ExecConfig {
    /// `command`.
    #[serde(deserialize_with = "lenient")]
    pub command: String,
    /// `args`.
    #[serde(deserialize_with = "lenient")]
    pub args: Vec<String>,
    /// `env`.
    #[serde(deserialize_with = "lenient_list")]
    pub env: Vec<ExecEnvVar>,
    /// `apiVersion`: the plugin API version.
    #[serde(rename = "apiVersion", deserialize_with = "lenient")]
    pub api_version: String,
    /// `installHint`.
    #[serde(rename = "installHint", deserialize_with = "lenient")]
    pub install_hint: String,
    /// `provideClusterInfo`.
    #[serde(rename = "provideClusterInfo", deserialize_with = "lenient")]
    pub provide_cluster_info: bool,
    /// `interactiveMode` (empty: not set).
    #[serde(rename = "interactiveMode", deserialize_with = "lenient")]
    pub interactive_mode: String,
}

impl ExecConfig {
    /// `interactiveMode` as `clientcmd.Load` leaves it: `IfAvailable` when unset for the
    /// `v1alpha1`/`v1beta1` plugin APIs, else as written (possibly empty).
    pub fn defaulted_interactive_mode(&self) -> &str {
        if self.interactive_mode.is_empty()
            && matches!(
                self.api_version.as_str(),
                "client.authentication.k8s.io/v1beta1" | "client.authentication.k8s.io/v1alpha1"
            )
        {
            "IfAvailable"
        } else {
            &self.interactive_mode
        }
    }
}

/// One entry of an exec plugin's `env`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ExecEnvVar {
    /// `name`.
    #[serde(deserialize_with = "lenient")]
    pub name: String,
    /// `value`.
    #[serde(deserialize_with = "lenient")]
    pub value: String,
}

/// One entry of `extensions`, its value kept as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct NamedExtension {
    /// `name`.
    #[serde(deserialize_with = "lenient")]
    pub name: String,
    /// `extension`.
    pub extension: Value,
}

/// What the current context's lookup found missing. Callers word it as upstream does where it
/// happens; the texts here are those of `getNodeNameFromKubeletConfig`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// No context has the name `current-context` gives (empty when none is set).
    #[error("missing context {0}")]
    Context(String),
    /// No cluster has the name the current context gives.
    #[error("missing cluster {0}")]
    Cluster(String),
    /// No user has the name the current context gives.
    #[error("missing AuthInfo {0}")]
    AuthInfo(String),
}

/// The last entry of `name` in a named list.
fn last_named<'a, E, T>(
    entries: &'a [E],
    name: &str,
    split: impl Fn(&'a E) -> (&'a str, &'a T),
) -> Option<&'a T> {
    entries
        .iter()
        .rev()
        .map(split)
        .find(|(n, _)| *n == name)
        .map(|(_, item)| item)
}

impl Config {
    /// Reads a kubeconfig from the JSON value of its YAML (anything but a mapping reads as an empty
    /// document).
    pub fn from_value(doc: &Value) -> Self {
        Config::deserialize(doc).unwrap_or_default()
    }

    /// The cluster of this name (the last entry of equal names).
    pub fn cluster(&self, name: &str) -> Option<&Cluster> {
        last_named(&self.clusters, name, |c| (c.name.as_str(), &c.cluster))
    }

    /// The context of this name (the last entry of equal names).
    pub fn context(&self, name: &str) -> Option<&Context> {
        last_named(&self.contexts, name, |c| (c.name.as_str(), &c.context))
    }

    /// The user of this name (the last entry of equal names).
    pub fn auth_info(&self, name: &str) -> Option<&AuthInfo> {
        last_named(&self.auth_infos, name, |u| (u.name.as_str(), &u.auth_info))
    }

    /// The context `current-context` names.
    pub fn current(&self) -> Result<&Context, LookupError> {
        self.context(&self.current_context)
            .ok_or_else(|| LookupError::Context(self.current_context.clone()))
    }

    /// The current context's cluster.
    pub fn current_cluster(&self) -> Result<&Cluster, LookupError> {
        let context = self.current()?;
        self.cluster(&context.cluster)
            .ok_or_else(|| LookupError::Cluster(context.cluster.clone()))
    }

    /// The current context's user.
    pub fn current_auth_info(&self) -> Result<&AuthInfo, LookupError> {
        let context = self.current()?;
        self.auth_info(&context.auth_info)
            .ok_or_else(|| LookupError::AuthInfo(context.auth_info.clone()))
    }

    /// Upstream's `GetClusterFromKubeConfig`: the unnamed cluster if there is one, else the current
    /// context's cluster; with its name.
    pub fn default_cluster(&self) -> Option<(&str, &Cluster)> {
        if let Some(unnamed) = self.cluster("") {
            return Some(("", unnamed));
        }
        let name = self.current().ok()?.cluster.as_str();
        self.cluster(name).map(|c| (name, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(doc: Value) -> Config {
        Config::from_value(&doc)
    }

    fn full() -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "k", "cluster": {"server": "https://old"}},
                {"name": "k", "cluster": {"server": "https://k:6443", "certificate-authority-data": "Q0E="}},
            ],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            "current-context": "c",
            "users": [
                {"name": "u", "user": {"client-certificate-data": "Q0VSVA==", "client-key-data": "S0VZ"}},
                {"name": "f", "user": {"client-certificate": "/pki/c.crt", "client-key": "/pki/c.key"}},
            ],
            "unknown": {"ignored": true},
        })
    }

    #[test]
    fn the_current_cluster_and_user_are_found_the_last_of_equal_names_winning() {
        let c = config(full());
        let cluster = c.current_cluster().expect("cluster");
        assert_eq!(cluster.server, "https://k:6443");
        assert_eq!(cluster.certificate_authority_data, "Q0E=");
        let user = c.current_auth_info().expect("user");
        assert_eq!(user.client_certificate_data, "Q0VSVA==");
        assert!(user.client_certificate.is_empty());
        assert_eq!(c.default_cluster().map(|(n, _)| n), Some("k"));
    }

    #[test]
    fn a_missing_current_context_is_named() {
        let mut doc = full();
        doc["current-context"] = json!("gone");
        let c = config(doc);
        assert_eq!(c.current(), Err(LookupError::Context("gone".into())));
        assert_eq!(c.current_cluster(), Err(LookupError::Context("gone".into())));
        assert_eq!(c.current_auth_info(), Err(LookupError::Context("gone".into())));
        assert_eq!(c.default_cluster(), None);
        let none = config(json!({"contexts": []}));
        assert_eq!(
            none.current().expect_err("missing").to_string(),
            "missing context "
        );
    }

    #[test]
    fn a_missing_cluster_is_named() {
        let mut doc = full();
        doc["contexts"][0]["context"]["cluster"] = json!("other");
        let c = config(doc);
        assert_eq!(c.current_cluster(), Err(LookupError::Cluster("other".into())));
        assert_eq!(
            c.current_cluster().expect_err("missing").to_string(),
            "missing cluster other"
        );
        assert!(c.current_auth_info().is_ok());
    }

    #[test]
    fn a_missing_user_is_named() {
        let mut doc = full();
        doc["contexts"][0]["context"]["user"] = json!("nobody");
        let c = config(doc);
        assert_eq!(c.current_auth_info(), Err(LookupError::AuthInfo("nobody".into())));
        assert_eq!(
            c.current_auth_info().expect_err("missing").to_string(),
            "missing AuthInfo nobody"
        );
        assert!(c.current_cluster().is_ok());
    }

    #[test]
    fn embedded_and_file_certificates_are_told_apart() {
        let mut doc = full();
        doc["contexts"][0]["context"]["user"] = json!("f");
        let c = config(doc);
        let user = c.current_auth_info().expect("user");
        assert!(user.client_certificate_data.is_empty());
        assert_eq!(user.client_certificate, "/pki/c.crt");
        assert_eq!(user.client_key, "/pki/c.key");
        assert!(user.has_credentials());
    }

    #[test]
    fn an_unnamed_cluster_is_the_default_one() {
        let c = config(json!({
            "clusters": [{"name": "b", "cluster": {"server": "y"}}, {"cluster": {"server": "x"}}],
            "contexts": [{"name": "c", "context": {"cluster": "b"}}],
            "current-context": "c",
        }));
        let (name, cluster) = c.default_cluster().expect("default");
        assert_eq!((name, cluster.server.as_str()), ("", "x"));
        assert_eq!(c.current_cluster().map(|c| c.server.as_str()), Ok("y"));
    }

    #[test]
    fn mistyped_fields_read_as_empty() {
        let c = config(json!({
            "clusters": [{"name": 5, "cluster": {"server": ["x"], "insecure-skip-tls-verify": "yes"}}, "junk"],
            "contexts": {"not": "a list"},
            "current-context": 7,
            "users": [{"name": "u", "user": {"exec": "sh", "auth-provider": {"name": "oidc"}, "as-groups": "g"}}],
        }));
        assert_eq!(c.clusters.len(), 2);
        assert_eq!(c.clusters[0], NamedCluster::default());
        assert_eq!(c.clusters[1], NamedCluster::default());
        assert!(c.contexts.is_empty());
        assert_eq!(c.current_context, "");
        let user = c.auth_info("u").expect("user");
        assert_eq!(user.exec, None);
        assert!(user.impersonate_groups.is_empty());
        assert!(user.has_credentials());
        assert_eq!(Config::from_value(&Value::Null), Config::default());
    }

    #[test]
    fn exec_interactive_mode_defaults_for_the_older_plugin_apis() {
        let exec = |api: &str, mode: &str| ExecConfig {
            api_version: api.into(),
            interactive_mode: mode.into(),
            ..ExecConfig::default()
        };
        assert_eq!(
            exec("client.authentication.k8s.io/v1beta1", "").defaulted_interactive_mode(),
            "IfAvailable"
        );
        assert_eq!(
            exec("client.authentication.k8s.io/v1", "").defaulted_interactive_mode(),
            ""
        );
        assert_eq!(
            exec("client.authentication.k8s.io/v1alpha1", "Never").defaulted_interactive_mode(),
            "Never"
        );
    }
}
