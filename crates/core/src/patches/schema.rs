//! The patch metadata strategic merge needs: which list fields merge (and by which key) rather
//! than being replaced. Upstream reads these from the Go struct tags (`patchStrategy`,
//! `patchMergeKey`) of `v1.Pod` and `KubeletConfiguration`; this is the same information for every
//! field of a Pod that has any, and "none" for everything else (including every field of the
//! KubeletConfiguration, which has no merge lists).

/// A node in the type tree, as far as patch metadata goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Schema {
    Pod,
    ObjectMeta,
    PodSpec,
    Container,
    PodStatus,
    /// A type with no merge lists anywhere below it.
    Plain,
}

/// How a field is patched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldMeta {
    /// `patchStrategy` contains `merge`.
    pub(crate) merge: bool,
    /// `patchMergeKey`, for lists of objects.
    pub(crate) merge_key: &'static str,
}

const NONE: FieldMeta = FieldMeta {
    merge: false,
    merge_key: "",
};

const fn merge_by(key: &'static str) -> FieldMeta {
    FieldMeta {
        merge: true,
        merge_key: key,
    }
}

impl Schema {
    /// The name upstream prints in "cannot merge lists without merge key for <name>".
    pub(crate) fn name(self) -> &'static str {
        match self {
            Schema::Pod => "v1.Pod",
            Schema::ObjectMeta => "v1.ObjectMeta",
            Schema::PodSpec => "v1.PodSpec",
            Schema::Container => "v1.Container",
            Schema::PodStatus => "v1.PodStatus",
            Schema::Plain => "",
        }
    }

    /// The schema of field `key` and its patch metadata.
    pub(crate) fn lookup(self, key: &str) -> (Schema, FieldMeta) {
        match (self, key) {
            (Schema::Pod, "metadata") => (Schema::ObjectMeta, NONE),
            (Schema::Pod, "spec") => (Schema::PodSpec, NONE),
            (Schema::Pod, "status") => (Schema::PodStatus, NONE),
            (Schema::ObjectMeta, "ownerReferences") => (Schema::Plain, merge_by("uid")),
            (Schema::ObjectMeta, "finalizers") => (Schema::Plain, merge_by("")),
            (Schema::PodSpec, "volumes") => (Schema::Plain, merge_by("name")),
            (Schema::PodSpec, "initContainers" | "containers" | "ephemeralContainers") => {
                (Schema::Container, merge_by("name"))
            }
            (Schema::PodSpec, "imagePullSecrets") => (Schema::Plain, merge_by("name")),
            (Schema::PodSpec, "hostAliases") => (Schema::Plain, merge_by("ip")),
            (Schema::PodSpec, "topologySpreadConstraints") => (Schema::Plain, merge_by("topologyKey")),
            (Schema::Container, "ports") => (Schema::Plain, merge_by("containerPort")),
            (Schema::Container, "env") => (Schema::Plain, merge_by("name")),
            (Schema::Container, "volumeMounts") => (Schema::Plain, merge_by("mountPath")),
            (Schema::Container, "volumeDevices") => (Schema::Plain, merge_by("devicePath")),
            (Schema::PodStatus, "conditions") => (Schema::Plain, merge_by("type")),
            (Schema::PodStatus, "podIPs") => (Schema::Plain, merge_by("ip")),
            _ => (Schema::Plain, NONE),
        }
    }
}
