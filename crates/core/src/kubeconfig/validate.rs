//! client-go's `clientcmd.Validate` on a typed kubeconfig: the current context, each context's
//! user and cluster, each user's credentials, each cluster's server and CA file.

use std::collections::{BTreeMap, BTreeSet};

use super::document::{AuthInfo, Cluster, Config, Context};

/// Why a kubeconfig is invalid: every problem found, worded as client-go words them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid configuration: {}", listed(.0))]
pub struct InvalidConfig(pub Vec<String>);

/// One problem as it is, several in brackets (client-go's aggregate error).
fn listed(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        _ => format!("[{}]", errors.join(", ")),
    }
}

impl Config {
    /// client-go's `clientcmd.Validate`. `unreadable` answers why a named file cannot be opened
    /// (`None`: it can). Several problems are listed by name (clusters, contexts and users in name
    /// order, the last of equal names counting), where Go visits its maps in random order; a problem
    /// found twice is listed once.
    pub fn validate(&self, unreadable: &dyn Fn(&str) -> Option<String>) -> Result<(), InvalidConfig> {
        let contexts: BTreeMap<&str, &Context> = self
            .contexts
            .iter()
            .map(|c| (c.name.as_str(), &c.context))
            .collect();
        let users: BTreeMap<&str, &AuthInfo> = self
            .auth_infos
            .iter()
            .map(|u| (u.name.as_str(), &u.auth_info))
            .collect();
        let clusters: BTreeMap<&str, &Cluster> = self
            .clusters
            .iter()
            .map(|c| (c.name.as_str(), &c.cluster))
            .collect();
        let mut errors: Vec<String> = Vec::new();
        let current = self.current_context.as_str();
        if !current.is_empty() && !contexts.contains_key(current) {
            errors.push(format!("context was not found for specified context: {current}"));
        }
        for (name, ctx) in &contexts {
            let user = ctx.auth_info.as_str();
            if user.is_empty() {
                errors.push(format!("user was not specified for context {name:?}"));
            } else if !users.contains_key(user) {
                errors.push(format!("user {user:?} was not found for context {name:?}"));
            }
            let cluster = ctx.cluster.as_str();
            if cluster.is_empty() {
                errors.push(format!("cluster was not specified for context {name:?}"));
            } else if !clusters.contains_key(cluster) {
                errors.push(format!("cluster {cluster:?} was not found for context {name:?}"));
            }
        }
        let set = |s: &str| !s.is_empty();
        for (name, u) in &users {
            let mut methods = Vec::new();
            if set(&u.token) {
                methods.push("token");
            }
            if set(&u.username) || set(&u.password) {
                methods.push("basicAuth");
            }
            if set(&u.client_certificate) || set(&u.client_certificate_data) {
                if set(&u.client_certificate) && set(&u.client_certificate_data) {
                    errors.push(format!("client-cert-data and client-cert are both specified for {name}. client-cert-data will override."));
                }
                if set(&u.client_key) && set(&u.client_key_data) {
                    errors.push(format!("client-key-data and client-key are both specified for {name}; client-key-data will override"));
                }
                if !set(&u.client_key) && !set(&u.client_key_data) {
                    errors.push(format!("client-key-data or client-key must be specified for {name} to use the clientCert authentication method."));
                }
                for (file, what) in [
                    (&u.client_certificate, "client-cert"),
                    (&u.client_key, "client-key"),
                ] {
                    if let Some(why) = set(file).then(|| unreadable(file)).flatten() {
                        errors.push(format!("unable to read {what} {file} for {name} due to {why}"));
                    }
                }
            }
            if let Some(e) = &u.exec {
                if u.auth_provider.is_some() {
                    errors.push(format!(
                        "authProvider cannot be provided in combination with an exec plugin for {name}"
                    ));
                }
                if !set(&e.command) {
                    errors.push(format!(
                        "command must be specified for {name} to use exec authentication plugin"
                    ));
                }
                if !set(&e.api_version) {
                    errors.push(format!(
                        "apiVersion must be specified for {name} to use exec authentication plugin"
                    ));
                }
                match e.defaulted_interactive_mode() {
                    "" => errors.push(format!(
                        "interactiveMode must be specified for {name} to use exec authentication plugin"
                    )),
                    "Never" | "IfAvailable" | "Always" => {}
                    other => errors.push(format!("invalid interactiveMode for {name}: {other:?}")),
                }
            }
            if methods.len() > 1 {
                errors.push(format!(
                    "more than one authentication method found for {name}; found [{}], only one is allowed",
                    methods.join(" ")
                ));
            }
        }
        for (name, c) in &clusters {
            if !set(&c.server) {
                errors.push(if name.is_empty() {
                    "default cluster has no server defined".to_string()
                } else {
                    format!("no server found for cluster {name:?}")
                });
            }
            if set(&c.certificate_authority) && set(&c.certificate_authority_data) {
                errors.push(format!("certificate-authority-data and certificate-authority are both specified for {name}. certificate-authority-data will override."));
            }
            let file = &c.certificate_authority;
            if let Some(why) = set(file).then(|| unreadable(file)).flatten() {
                errors.push(format!(
                    "unable to read certificate-authority {file} for {name} due to {why}"
                ));
            }
        }
        let mut seen = BTreeSet::new();
        errors.retain(|e| seen.insert(e.clone()));
        if errors.is_empty() {
            Ok(())
        } else {
            Err(InvalidConfig(errors))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn unreadable(path: &str) -> Option<String> {
        Some(format!("open {path}: no such file or directory"))
    }

    #[test]
    fn a_valid_document_passes() {
        let c = Config::from_value(&json!({
            "clusters": [{"name": "k", "cluster": {"server": "https://k"}}],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            "current-context": "c",
            "users": [{"name": "u", "user": {"token": "t"}}],
        }));
        assert_eq!(c.validate(&unreadable), Ok(()));
    }

    #[test]
    fn problems_are_listed_in_brackets_by_name() {
        let c = Config::from_value(&json!({
            "clusters": [{"name": "z"}, {"name": "a", "cluster": {"certificate-authority": "/ca"}}],
            "current-context": "gone",
        }));
        let err = c.validate(&unreadable).expect_err("invalid");
        assert_eq!(
            err.to_string(),
            "invalid configuration: [context was not found for specified context: gone, no server found for cluster \"a\", unable to read certificate-authority /ca for a due to open /ca: no such file or directory, no server found for cluster \"z\"]"
        );
        let one = Config::from_value(&json!({"clusters": [{"name": ""}]}));
        assert_eq!(
            one.validate(&unreadable).expect_err("invalid").to_string(),
            "invalid configuration: default cluster has no server defined"
        );
    }
}
