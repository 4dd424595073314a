//! The errors of API calls: the API server's answer classified as client-go's `apierrors.Is*`
//! do, with the server's own message (what upstream prints), and the call that failed.

use super::{Call, Resource, Verb};

/// A failed API call or policy.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClusterError {
    /// 404: the object (or its namespace) does not exist.
    #[error("{message}")]
    NotFound {
        /// The call.
        call: Box<Call>,
        /// The API server's message, e.g. `configmaps "x" not found`.
        message: String,
    },
    /// 409 with reason AlreadyExists: CREATE of an existing object.
    #[error("{message}")]
    AlreadyExists {
        /// The call.
        call: Box<Call>,
        /// The API server's message.
        message: String,
    },
    /// 409 Conflict: a stale resourceVersion.
    #[error("{message}")]
    Conflict {
        /// The call.
        call: Box<Call>,
        /// The API server's message.
        message: String,
    },
    /// 422 Invalid: the object failed validation.
    #[error("{message}")]
    Invalid {
        /// The call.
        call: Box<Call>,
        /// The API server's message.
        message: String,
    },
    /// 403 Forbidden: RBAC or admission said no.
    #[error("{message}")]
    Forbidden {
        /// The call.
        call: Box<Call>,
        /// The API server's message.
        message: String,
    },
    /// No answer: the connection failed, was refused or reset, or timed out.
    #[error("{call}: the API server is unavailable: {message}")]
    Unavailable {
        /// The call.
        call: Box<Call>,
        /// What the transport said.
        message: String,
    },
    /// The API server answered with a certificate that failed verification (a CA the
    /// kubeconfig does not trust, a name the certificate does not hold, expired): no request was
    /// sent. TLS verification is never switched off to get past it.
    #[error("{call}: the API server's certificate was refused: {message}")]
    Untrusted {
        /// The call.
        call: Box<Call>,
        /// The server and what verification said, in Go's words.
        message: String,
    },
    /// Any other error status (401, 429, 500, 504…).
    #[error("{message}")]
    Api {
        /// The call.
        call: Box<Call>,
        /// HTTP status code.
        code: u16,
        /// The Status `reason` (`Unauthorized`, `InternalError`, `Timeout`…).
        reason: String,
        /// The API server's message.
        message: String,
    },
    /// The request could not be made or its answer not read (no name in the object, a body that
    /// is not JSON…).
    #[error("{call}: {message}")]
    Client {
        /// The call.
        call: Box<Call>,
        /// What went wrong.
        message: String,
    },
    /// A token Secret that must not exist yet does (`kubeadm init` with a token id in use).
    #[error("a token with id {id:?} already exists")]
    TokenExists {
        /// The token id.
        id: String,
    },
    /// A retry loop gave up; the text starts with apimachinery's `wait.ErrWaitTimeout`, which
    /// upstream prints in these cases, and goes on with the last attempt's error, which upstream
    /// drops: "timed out" alone does not say that the API server was unreachable, or why.
    #[error(
        "timed out waiting for the condition{}",
        last.as_ref().map(|e| format!(" (last attempt: {e})")).unwrap_or_default()
    )]
    WaitTimeout {
        /// The last attempt's error.
        #[source]
        last: Option<Box<ClusterError>>,
    },
    /// An error wrapped with what was being done, as upstream's `errors.Wrap`.
    #[error("{context}: {source}")]
    Context {
        /// What was being done (`unable to create ConfigMap`).
        context: String,
        /// The cause.
        #[source]
        source: Box<ClusterError>,
    },
}

impl ClusterError {
    /// Wraps the error with what was being done.
    pub fn context(self, context: impl Into<String>) -> Self {
        ClusterError::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// The innermost error, under every [`ClusterError::Context`].
    pub fn root(&self) -> &ClusterError {
        match self {
            ClusterError::Context { source, .. } => source.root(),
            other => other,
        }
    }

    /// The call that failed, when the error comes from one.
    pub fn call(&self) -> Option<&Call> {
        match self.root() {
            ClusterError::NotFound { call, .. }
            | ClusterError::AlreadyExists { call, .. }
            | ClusterError::Conflict { call, .. }
            | ClusterError::Invalid { call, .. }
            | ClusterError::Forbidden { call, .. }
            | ClusterError::Unavailable { call, .. }
            | ClusterError::Untrusted { call, .. }
            | ClusterError::Api { call, .. }
            | ClusterError::Client { call, .. } => Some(&**call),
            _ => None,
        }
    }

    /// `apierrors.IsNotFound`.
    pub fn is_not_found(&self) -> bool {
        matches!(self.root(), ClusterError::NotFound { .. })
    }
    /// `apierrors.IsAlreadyExists`.
    pub fn is_already_exists(&self) -> bool {
        matches!(self.root(), ClusterError::AlreadyExists { .. })
    }
    /// `apierrors.IsConflict`.
    pub fn is_conflict(&self) -> bool {
        matches!(self.root(), ClusterError::Conflict { .. })
    }
    /// `apierrors.IsTimeout` (a 504 Status with reason Timeout).
    pub fn is_timeout(&self) -> bool {
        matches!(self.root(), ClusterError::Api { reason, .. } if reason == "Timeout")
    }
    /// Whether the API server could not be reached.
    pub fn is_unavailable(&self) -> bool {
        matches!(self.root(), ClusterError::Unavailable { .. })
    }
    /// Whether the API server's certificate failed verification.
    pub fn is_untrusted(&self) -> bool {
        matches!(self.root(), ClusterError::Untrusted { .. })
    }

    /// The error the API server gives for a missing object, with its message
    /// (`secrets "bootstrap-token-abcdef" not found`).
    pub fn not_found(verb: Verb, resource: &Resource, namespace: &str, name: &str) -> Self {
        ClusterError::NotFound {
            call: Box::new(Call::new(verb, resource, namespace, name)),
            message: format!("{} {name:?} not found", resource.group_resource()),
        }
    }

    /// The error the API server gives for a CREATE of an existing object.
    pub fn already_exists(resource: &Resource, namespace: &str, name: &str) -> Self {
        ClusterError::AlreadyExists {
            call: Box::new(Call::new(Verb::Create, resource, namespace, name)),
            message: format!("{} {name:?} already exists", resource.group_resource()),
        }
    }

    /// Classifies an error Status from the API server as client-go does (by reason first, then by
    /// code).
    pub fn from_status(call: Call, code: u16, reason: &str, message: &str) -> Self {
        let call = Box::new(call);
        let message = message.to_string();
        match (reason, code) {
            ("NotFound", _) | ("", 404) => ClusterError::NotFound { call, message },
            ("AlreadyExists", _) => ClusterError::AlreadyExists { call, message },
            ("Conflict", _) | ("", 409) => ClusterError::Conflict { call, message },
            ("Invalid", _) | ("", 422) => ClusterError::Invalid { call, message },
            ("Forbidden", _) | ("", 403) => ClusterError::Forbidden { call, message },
            _ => ClusterError::Api {
                call,
                code,
                reason: reason.to_string(),
                message,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_classified_as_client_go_does() {
        let call = Call::new(Verb::Get, &Resource::config_maps(), "kube-system", "x");
        let cases = [
            (404, "NotFound", "NotFound"),
            (409, "AlreadyExists", "AlreadyExists"),
            (409, "Conflict", "Conflict"),
            (422, "Invalid", "Invalid"),
            (403, "Forbidden", "Forbidden"),
            (504, "Timeout", "Api"),
            (500, "InternalError", "Api"),
        ];
        for (code, reason, want) in cases {
            let e = ClusterError::from_status(call.clone(), code, reason, "m");
            let got = format!("{e:?}");
            assert!(got.starts_with(want), "{code} {reason}: {got}");
            assert_eq!(e.to_string(), "m");
        }
        assert!(ClusterError::from_status(call, 504, "Timeout", "m").is_timeout());
    }

    #[test]
    fn context_wraps_like_errors_wrap_and_keeps_the_kind() {
        let e = ClusterError::already_exists(
            &Resource::new("rbac.authorization.k8s.io", "v1", "roles"),
            "ns",
            "r",
        )
        .context("unable to create RBAC role");
        assert_eq!(
            e.to_string(),
            "unable to create RBAC role: roles.rbac.authorization.k8s.io \"r\" already exists"
        );
        assert!(e.is_already_exists());
        assert_eq!(
            e.call().map(|c| c.to_string()).as_deref(),
            Some("CREATE roles.rbac.authorization.k8s.io \"r\" in namespace \"ns\"")
        );
    }
}
