//! Versions as upstream's `k8s.io/apimachinery/pkg/util/version.ParseSemantic` parses and orders
//! them: the type lives in `kubeadm-api` (the config's `kubernetesVersion` is parsed with it too).

pub use kubeadm_api::semantic_version::SemanticVersion;
