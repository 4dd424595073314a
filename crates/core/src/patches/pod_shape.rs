//! Reading a patched pod back the way upstream does: it decodes the patched JSON into a Go
//! `v1.Pod` and marshals that again. So members Go has no field for disappear, `null`s and empty
//! `omitempty` members disappear, members Go always writes come back (`creationTimestamp: null`,
//! `resources: {}`, `status: {}`), numbers of integer fields lose a `.0`, and quantities are
//! canonicalised. The Pod's types are described below down to the parts kubeadm's pods use;
//! deeper, rarer structures are kept as patched, minus their `null`s.

use serde_json::{Map, Value};

use super::ApplyError;
use super::gotext::json;
use super::quantity;

/// How a field is encoded by Go.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// `string`.
    Str,
    /// `bool`.
    Bool,
    /// An integer.
    Int,
    /// A pointer to a scalar: written whenever set, even to a zero value.
    Ptr,
    /// `metav1.Time` (a struct: written as `null` when zero).
    Time,
    /// `intstr.IntOrString`.
    IntOrStr,
    /// A struct (written even when empty).
    Struct(&'static [Field]),
    /// A pointer to a struct (written when set, even empty).
    PtrStruct(&'static [Field]),
    /// `map[string]string`.
    StrMap,
    /// `map[ResourceName]resource.Quantity`.
    Quantities,
    /// A slice of scalars.
    List,
    /// A slice of structs.
    StructList(&'static [Field]),
    /// Not described further: kept as patched, minus `null`s.
    Opaque,
}

#[derive(Debug, Clone, Copy)]
struct Field {
    name: &'static str,
    kind: Kind,
    omitempty: bool,
}

const fn f(name: &'static str, kind: Kind) -> Field {
    Field {
        name,
        kind,
        omitempty: true,
    }
}

const fn req(name: &'static str, kind: Kind) -> Field {
    Field {
        name,
        kind,
        omitempty: false,
    }
}

use Kind::*;

const POD: &[Field] = &[
    f("kind", Str),
    f("apiVersion", Str),
    req("metadata", Struct(OBJECT_META)),
    req("spec", Struct(POD_SPEC)),
    req("status", Struct(POD_STATUS)),
];

const OBJECT_META: &[Field] = &[
    f("name", Str),
    f("generateName", Str),
    f("namespace", Str),
    f("selfLink", Str),
    f("uid", Str),
    f("resourceVersion", Str),
    f("generation", Int),
    req("creationTimestamp", Time),
    f("deletionTimestamp", Ptr),
    f("deletionGracePeriodSeconds", Ptr),
    f("labels", StrMap),
    f("annotations", StrMap),
    f("ownerReferences", Opaque),
    f("finalizers", List),
    f("managedFields", Opaque),
];

const POD_SPEC: &[Field] = &[
    f("volumes", StructList(VOLUME)),
    f("initContainers", StructList(CONTAINER)),
    req("containers", StructList(CONTAINER)),
    f("ephemeralContainers", Opaque),
    f("restartPolicy", Str),
    f("terminationGracePeriodSeconds", Ptr),
    f("activeDeadlineSeconds", Ptr),
    f("dnsPolicy", Str),
    f("nodeSelector", StrMap),
    f("serviceAccountName", Str),
    f("serviceAccount", Str),
    f("automountServiceAccountToken", Ptr),
    f("nodeName", Str),
    f("hostNetwork", Bool),
    f("hostPID", Bool),
    f("hostIPC", Bool),
    f("shareProcessNamespace", Ptr),
    f("securityContext", PtrStruct(POD_SECURITY_CONTEXT)),
    f("imagePullSecrets", Opaque),
    f("hostname", Str),
    f("subdomain", Str),
    f("affinity", Opaque),
    f("schedulerName", Str),
    f("tolerations", StructList(TOLERATION)),
    f("hostAliases", Opaque),
    f("priorityClassName", Str),
    f("priority", Ptr),
    f("dnsConfig", Opaque),
    f("readinessGates", Opaque),
    f("runtimeClassName", Ptr),
    f("enableServiceLinks", Ptr),
    f("preemptionPolicy", Ptr),
    f("overhead", Quantities),
    f("topologySpreadConstraints", Opaque),
    f("setHostnameAsFQDN", Ptr),
    f("os", Opaque),
    f("hostUsers", Ptr),
];

const POD_SECURITY_CONTEXT: &[Field] = &[
    f("seLinuxOptions", Opaque),
    f("windowsOptions", Opaque),
    f("runAsUser", Ptr),
    f("runAsGroup", Ptr),
    f("runAsNonRoot", Ptr),
    f("supplementalGroups", List),
    f("fsGroup", Ptr),
    f("sysctls", Opaque),
    f("fsGroupChangePolicy", Ptr),
    f("seccompProfile", PtrStruct(SECCOMP_PROFILE)),
];

const SECCOMP_PROFILE: &[Field] = &[req("type", Str), f("localhostProfile", Ptr)];

const CONTAINER: &[Field] = &[
    req("name", Str),
    f("image", Str),
    f("command", List),
    f("args", List),
    f("workingDir", Str),
    f("ports", StructList(CONTAINER_PORT)),
    f("envFrom", Opaque),
    f("env", StructList(ENV_VAR)),
    req("resources", Struct(RESOURCES)),
    f("volumeMounts", StructList(VOLUME_MOUNT)),
    f("volumeDevices", Opaque),
    f("livenessProbe", PtrStruct(PROBE)),
    f("readinessProbe", PtrStruct(PROBE)),
    f("startupProbe", PtrStruct(PROBE)),
    f("lifecycle", Opaque),
    f("terminationMessagePath", Str),
    f("terminationMessagePolicy", Str),
    f("imagePullPolicy", Str),
    f("securityContext", Opaque),
    f("stdin", Bool),
    f("stdinOnce", Bool),
    f("tty", Bool),
];

const CONTAINER_PORT: &[Field] = &[
    f("name", Str),
    f("hostPort", Int),
    req("containerPort", Int),
    f("protocol", Str),
    f("hostIP", Str),
];

const ENV_VAR: &[Field] = &[req("name", Str), f("value", Str), f("valueFrom", Opaque)];

const RESOURCES: &[Field] = &[f("limits", Quantities), f("requests", Quantities)];

const VOLUME_MOUNT: &[Field] = &[
    req("name", Str),
    f("readOnly", Bool),
    req("mountPath", Str),
    f("subPath", Str),
    f("mountPropagation", Ptr),
    f("subPathExpr", Str),
];

const VOLUME: &[Field] = &[
    req("name", Str),
    f("hostPath", PtrStruct(HOST_PATH)),
    f("emptyDir", Opaque),
    f("gcePersistentDisk", Opaque),
    f("awsElasticBlockStore", Opaque),
    f("gitRepo", Opaque),
    f("secret", Opaque),
    f("nfs", Opaque),
    f("iscsi", Opaque),
    f("glusterfs", Opaque),
    f("persistentVolumeClaim", Opaque),
    f("rbd", Opaque),
    f("flexVolume", Opaque),
    f("cinder", Opaque),
    f("cephfs", Opaque),
    f("flocker", Opaque),
    f("downwardAPI", Opaque),
    f("fc", Opaque),
    f("azureFile", Opaque),
    f("configMap", Opaque),
    f("vsphereVolume", Opaque),
    f("quobyte", Opaque),
    f("azureDisk", Opaque),
    f("photonPersistentDisk", Opaque),
    f("projected", Opaque),
    f("portworxVolume", Opaque),
    f("scaleIO", Opaque),
    f("storageos", Opaque),
    f("csi", Opaque),
    f("ephemeral", Opaque),
];

const HOST_PATH: &[Field] = &[req("path", Str), f("type", Ptr)];

const PROBE: &[Field] = &[
    f("exec", Opaque),
    f("httpGet", PtrStruct(HTTP_GET)),
    f("tcpSocket", Opaque),
    f("grpc", Opaque),
    f("initialDelaySeconds", Int),
    f("timeoutSeconds", Int),
    f("periodSeconds", Int),
    f("successThreshold", Int),
    f("failureThreshold", Int),
    f("terminationGracePeriodSeconds", Ptr),
];

const HTTP_GET: &[Field] = &[
    f("path", Str),
    req("port", IntOrStr),
    f("host", Str),
    f("scheme", Str),
    f("httpHeaders", Opaque),
];

const TOLERATION: &[Field] = &[
    f("key", Str),
    f("operator", Str),
    f("value", Str),
    f("effect", Str),
    f("tolerationSeconds", Ptr),
];

const POD_STATUS: &[Field] = &[
    f("phase", Str),
    f("conditions", Opaque),
    f("message", Str),
    f("reason", Str),
    f("nominatedNodeName", Str),
    f("hostIP", Str),
    f("podIP", Str),
    f("podIPs", Opaque),
    f("startTime", Ptr),
    f("initContainerStatuses", Opaque),
    f("containerStatuses", Opaque),
    f("qosClass", Str),
    f("ephemeralContainerStatuses", Opaque),
];

/// The pod as Go would write it after decoding `v`.
pub(crate) fn read_back(v: &Value) -> Result<Value, ApplyError> {
    let Value::Object(m) = v else {
        return Err(ApplyError::Decode(format!(
            "couldn't get version/kind; json parse error: {}",
            json(v)
        )));
    };
    match (
        m.get("apiVersion").and_then(Value::as_str),
        m.get("kind").and_then(Value::as_str),
    ) {
        (Some("v1"), Some("Pod")) => {}
        _ => {
            return Err(ApplyError::Decode(format!(
                "Object 'Kind' is missing or is not a v1 Pod in '{}'",
                json(v)
            )));
        }
    }
    structure(v, POD, "Pod")
}

fn type_error(json_kind: &str, path: &str, go_type: &str) -> ApplyError {
    ApplyError::Decode(format!(
        "json: cannot unmarshal {json_kind} into Go struct field {path} of type {go_type}"
    ))
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A struct: known fields in, unknown out, empty `omitempty` fields out.
fn structure(v: &Value, fields: &[Field], path: &str) -> Result<Value, ApplyError> {
    let empty = Map::new();
    let m = match v {
        Value::Object(m) => m,
        Value::Null => &empty,
        other => return Err(type_error(kind_of(other), path, "struct")),
    };
    let mut out = Map::new();
    for field in fields {
        let sub = format!("{path}.{}", field.name);
        let value = m.get(field.name).unwrap_or(&Value::Null);
        if let Some(v) = member(value, field, &sub)? {
            out.insert(field.name.to_string(), v);
        }
    }
    Ok(Value::Object(out))
}

/// One member: `None` when Go would leave it out.
fn member(v: &Value, field: &Field, path: &str) -> Result<Option<Value>, ApplyError> {
    let keep_if = |empty: bool, v: Value| if empty && field.omitempty { None } else { Some(v) };
    Ok(match (field.kind, v) {
        (Time, Value::Null) => Some(Value::Null),
        (Struct(fields), v) => Some(structure(v, fields, path)?),
        (StructList(_) | List, Value::Null) if !field.omitempty => Some(Value::Null),
        (_, Value::Null) => None,
        (Str, Value::String(s)) => keep_if(s.is_empty(), v.clone()),
        (Str, other) => return Err(type_error(kind_of(other), path, "string")),
        (Bool, Value::Bool(b)) => keep_if(!*b, v.clone()),
        (Bool, other) => return Err(type_error(kind_of(other), path, "bool")),
        (Int, Value::Number(n)) => {
            let i = n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                .ok_or_else(|| type_error("number", path, "int32"))?;
            keep_if(i == 0, Value::from(i))
        }
        (Int, other) => return Err(type_error(kind_of(other), path, "int32")),
        (IntOrStr, Value::Number(_) | Value::String(_)) => Some(v.clone()),
        (IntOrStr, other) => return Err(type_error(kind_of(other), path, "intstr.IntOrString")),
        (Ptr | Time, v) => Some(v.clone()),
        (PtrStruct(fields), v) => Some(structure(v, fields, path)?),
        (StrMap, Value::Object(m)) => {
            for (k, val) in m {
                if !val.is_string() && !val.is_null() {
                    return Err(type_error(kind_of(val), &format!("{path}.{k}"), "string"));
                }
            }
            let kept: Map<String, Value> = m
                .iter()
                .map(|(k, v)| (k.clone(), if v.is_null() { Value::from("") } else { v.clone() }))
                .collect();
            keep_if(kept.is_empty(), Value::Object(kept))
        }
        (Quantities, Value::Object(m)) => {
            let mut kept = Map::new();
            for (k, val) in m {
                let text = match val {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Null => "0".to_string(),
                    other => {
                        return Err(type_error(
                            kind_of(other),
                            &format!("{path}.{k}"),
                            "resource.Quantity",
                        ));
                    }
                };
                kept.insert(k.clone(), Value::from(quantity::canonical(&text)?));
            }
            keep_if(kept.is_empty(), Value::Object(kept))
        }
        (StrMap | Quantities, other) => return Err(type_error(kind_of(other), path, "map")),
        (List, Value::Array(a)) => keep_if(
            a.is_empty(),
            Value::Array(
                a.iter()
                    .map(|e| if e.is_null() { Value::from("") } else { e.clone() })
                    .collect(),
            ),
        ),
        (StructList(fields), Value::Array(a)) => {
            let items = a
                .iter()
                .map(|e| structure(e, fields, path))
                .collect::<Result<Vec<_>, _>>()?;
            keep_if(items.is_empty(), Value::Array(items))
        }
        (List | StructList(_), other) => return Err(type_error(kind_of(other), path, "slice")),
        (Opaque, v) => {
            let stripped = strip_nulls(v.clone());
            let empty = match &stripped {
                Value::Array(a) => a.is_empty(),
                _ => false,
            };
            keep_if(empty, stripped)
        }
    })
}

/// Drops `null` members everywhere.
fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}
