//! `kubeadm config print|migrate|images list|images pull`: the commands that need the configuration
//! API, and for `images pull` the container runtime too.

use std::path::Path;

use kubeadm_api::dynamic::DynamicInputs;
use kubeadm_api::internal::InitConfig;
use kubeadm_api::v1beta3::{ClusterConfiguration, InitConfiguration};
use kubeadm_api::{features, migrate, print, version};
use kubeadm_effects::cri::{PullProgress, Runtime};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::Reporter;
use kubeadm_host::fs::RealFs;

use crate::cobra::execute::Invocation;
use crate::error::{BadInput, CommandError, ConfigCommandError, Output};
use crate::options::config_load::{
    config_error, config_text, go_json_indent, image_settings, load_or_default_init,
    load_or_default_init_with, log_warnings, new_token,
};
use crate::printers::{Printer, PrinterError};
use crate::setup::{host_facts, reporter};

fn component_configs(inv: &Invocation<'_>) -> Vec<String> {
    inv.flags.strings("component-configs")
}

/// `kubeadm config print init-defaults`.
pub(crate) fn print_init_defaults(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let host = host_facts::gather();
    let kinds = component_configs(inv);
    let refs: Vec<&str> = kinds.iter().map(String::as_str).collect();
    let text = print::print_init_defaults(&host, &refs).map_err(ConfigCommandError::from)?;
    out.push_str(&text);
    Ok(())
}

/// `kubeadm config print join-defaults`.
pub(crate) fn print_join_defaults(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let host = host_facts::gather();
    let kinds = component_configs(inv);
    let refs: Vec<&str> = kinds.iter().map(String::as_str).collect();
    let text = print::print_join_defaults(&host, &refs).map_err(ConfigCommandError::from)?;
    out.push_str(&text);
    Ok(())
}

/// `kubeadm config migrate`.
pub(crate) fn migrate(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let old = inv.flags.string("old-config");
    if old.is_empty() {
        return Err(BadInput::NoOldConfig.into());
    }
    let bytes = RealFs
        .read(Path::new(&old))
        .map_err(|source| ConfigCommandError::ReadOld {
            path: old.clone(),
            source,
        })?;
    let text = config_text(&old, bytes)?;
    let host = host_facts::gather();
    let mut token = new_token;
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut token,
        fetch_version: &version::offline,
    };
    let exists = |p: &str| crate::setup::stat_ok(Path::new(p));
    let migrated = migrate::migrate(&old, &text, &mut inputs, &exists).map_err(|e| config_error(e, ""))?;
    log_warnings(&reporter(inv), &migrated.warnings);
    let new = inv.flags.string("new-config");
    if new.is_empty() {
        out.push_str(&migrated.text);
        return Ok(());
    }
    RealFs
        .write(Path::new(&new), migrated.text.as_bytes(), 0o644)
        .map_err(|source| {
            ConfigCommandError::WriteNew {
                path: new.clone(),
                source,
            }
            .into()
        })
}

const OUTPUT_FORMATS: &str = "go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,template,templatefile,text,yaml";

/// `kubeadm config images list`.
pub(crate) fn images_list(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let cluster = images_cluster_flags(inv)?;
    let mut printer = crate::printers::printer(
        &inv.flags.string("experimental-output"),
        inv.flags.bool("allow-missing-template-keys"),
        OUTPUT_FORMATS,
    )?;
    let rep = reporter(inv);
    let cfg = load_or_default_init(
        &host_facts::gather(),
        &inv.flags.string("config"),
        cluster,
        "could not convert cfg to an internal cfg: ",
    )?;
    let images = control_plane_images(&rep, &cfg);
    let format = match &mut printer {
        Printer::Text => "text",
        Printer::Json => "json",
        Printer::Yaml => "yaml",
        Printer::Template(t) => {
            return t.print(&images_object(&images), out).map_err(|reason| {
                PrinterError::Print {
                    object: "images".to_string(),
                    reason,
                }
                .into()
            });
        }
    };
    out.push_str(&render_images(&images, format));
    Ok(())
}

/// The cluster settings both `images` commands take from flags (upstream's
/// `AddImagesCommonConfigFlags`), defaulted; the feature gates are parsed first, as upstream does.
fn images_cluster_flags(inv: &Invocation<'_>) -> Result<ClusterConfiguration, CommandError> {
    let gates = features::parse_feature_gates(&inv.flags.string("feature-gates")).map_err(BadInput::from)?;
    let mut cluster = ClusterConfiguration {
        kubernetes_version: inv.flags.string("kubernetes-version"),
        image_repository: inv.flags.string("image-repository"),
        feature_gates: gates,
        ..Default::default()
    };
    kubeadm_api::defaults::default_cluster_configuration(&mut cluster);
    Ok(cluster)
}

/// Logs the loading warnings of `cfg`, then returns its control-plane images (logging theirs).
fn control_plane_images(rep: &dyn Reporter, cfg: &InitConfig) -> Vec<String> {
    log_warnings(rep, &cfg.warnings);
    let (images, warnings) = image_settings(cfg).control_plane_images();
    for w in &warnings {
        rep.warn("images.rs", &w.0);
    }
    images
}

/// `kubeadm config images pull`: pulls every image `images list` prints through the CRI, whether the
/// runtime has it already or not, as upstream does. Unlike upstream v1.25 (which runs `crictl pull`),
/// no `crictl` is needed: the CRI client speaks to the socket itself.
pub(crate) fn images_pull(inv: &Invocation<'_>, _out: &mut Output) -> Result<(), CommandError> {
    let cluster = images_cluster_flags(inv)?;
    // Upstream defaults an empty InitConfiguration here, so with no `--cri-socket` (and no `--config`)
    // the socket is detected from those present on the host.
    let mut init = InitConfiguration::default();
    init.node_registration.cri_socket = inv.flags.string("cri-socket");
    let rep = reporter(inv);
    // Upstream returns the loading error as it is (not wrapped as `images list` does), so field
    // validation errors keep their exit code 3.
    let cfg = load_or_default_init_with(
        &host_facts::gather(),
        &inv.flags.string("config"),
        init,
        cluster,
        "",
    )?;
    let images = control_plane_images(&rep, &cfg);
    let socket = &cfg.init.node_registration.cri_socket;
    let runtime = crate::setup::runtime(socket);
    // On a terminal, each pull shows on one line while it runs.
    let runtime = PullProgress {
        runtime: &*runtime,
        reporter: &rep,
        prefix: "config/images",
    };
    pull_images(&runtime, &images, &rep)
}

/// Upstream's `PullControlPlaneImages`: pulls each image in turn (each with the runtime's retries),
/// printing a line per image pulled, and stops at the first image that cannot be pulled.
fn pull_images(runtime: &dyn Runtime, images: &[String], rep: &dyn Reporter) -> Result<(), CommandError> {
    for image in images {
        runtime
            .pull_image(image)
            .map_err(|source| ConfigCommandError::Pull {
                image: image.clone(),
                source: Box::new(source),
            })?;
        // Printed as each pull finishes, not at the end: pulls can take minutes.
        rep.out(&format!("[config/images] Pulled {image}\n"));
    }
    Ok(())
}

/// The `output.kubeadm.k8s.io/v1alpha2` `Images` object, in Go's field order.
fn images_object(images: &[String]) -> serde_json::Value {
    serde_json::json!({
        "kind": "Images",
        "apiVersion": "output.kubeadm.k8s.io/v1alpha2",
        "images": images,
    })
}

/// Renders the `output.kubeadm.k8s.io/v1alpha2` `Images` object as upstream's printers do.
fn render_images(images: &[String], format: &str) -> String {
    match format {
        "json" => {
            let mut text = go_json_indent(&images_object(images));
            text.push('\n');
            text
        }
        "yaml" => kubeadm_yaml::to_string(&serde_json::json!({
            "apiVersion": "output.kubeadm.k8s.io/v1alpha2",
            "images": images,
            "kind": "Images",
        })),
        _ => images.iter().map(|i| format!("{i}\n")).collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use kubeadm_effects::cri::{
        CriCall, CriError, Image, PULL_IMAGE_RETRY, PodSandbox, RuntimeStatus, RuntimeVersion,
    };
    use kubeadm_effects::report::Severity;

    use super::*;

    /// A runtime that already holds `present`, refuses to pull `broken`, and records every pull.
    #[derive(Debug, Default)]
    struct Images {
        present: Vec<String>,
        broken: String,
        pulls: RefCell<Vec<String>>,
    }

    fn rpc(call: CriCall) -> CriError {
        CriError::Rpc {
            endpoint: "unix:///run/fake.sock".into(),
            call,
            code: "NotFound".into(),
            message: "not found".into(),
        }
    }

    impl Runtime for Images {
        fn endpoint(&self) -> &str {
            "unix:///run/fake.sock"
        }
        fn version(&self) -> Result<RuntimeVersion, CriError> {
            Err(rpc(CriCall::Version))
        }
        fn status(&self) -> Result<RuntimeStatus, CriError> {
            Ok(RuntimeStatus::default())
        }
        fn list_images(&self) -> Result<Vec<Image>, CriError> {
            Ok(Vec::new())
        }
        fn image_status(&self, image: &str) -> Result<Option<Image>, CriError> {
            Ok(self.present.iter().any(|p| p == image).then(Image::default))
        }
        fn pull_image_once(&self, image: &str) -> Result<String, CriError> {
            self.pulls.borrow_mut().push(image.to_string());
            if image == self.broken {
                Err(rpc(CriCall::PullImage(image.into())))
            } else {
                Ok(format!("sha256:{image}"))
            }
        }
        fn list_pod_sandboxes(&self) -> Result<Vec<PodSandbox>, CriError> {
            Ok(Vec::new())
        }
        fn stop_pod_sandbox(&self, _: &str) -> Result<(), CriError> {
            Ok(())
        }
        fn remove_pod_sandbox(&self, _: &str) -> Result<(), CriError> {
            Ok(())
        }
    }

    /// Standard output as printed (a reporter must be `Sync`, hence the mutex).
    #[derive(Default)]
    struct Printed(std::sync::Mutex<String>);

    impl Printed {
        fn text(&self) -> String {
            self.0.lock().expect("not poisoned").clone()
        }
    }

    impl Reporter for Printed {
        fn out(&self, text: &str) {
            self.0.lock().expect("not poisoned").push_str(text);
        }
        fn err(&self, _: &str) {}
        fn verbosity(&self) -> u8 {
            0
        }
        fn log(&self, _: Severity, _: u8, _: &str, _: &str) {}
    }

    fn images() -> Vec<String> {
        ["r/a:1", "r/b:2", "r/c:3"].map(String::from).to_vec()
    }

    #[test]
    fn pulls_every_image_even_those_present_and_prints_each() {
        let rt = Images {
            present: vec!["r/b:2".into()],
            ..Default::default()
        };
        let out = Printed::default();
        pull_images(&rt, &images(), &out).expect("all pull");
        assert_eq!(*rt.pulls.borrow(), images());
        assert_eq!(
            out.text(),
            "[config/images] Pulled r/a:1\n[config/images] Pulled r/b:2\n[config/images] Pulled r/c:3\n"
        );
    }

    #[test]
    fn stops_at_the_first_image_that_cannot_be_pulled() {
        let rt = Images {
            broken: "r/b:2".into(),
            ..Default::default()
        };
        let out = Printed::default();
        let err = pull_images(&rt, &images(), &out).expect_err("r/b:2 fails");
        assert_eq!(
            err.to_string(),
            "failed to pull image \"r/b:2\": PullImage \"r/b:2\" on unix:///run/fake.sock: rpc error: code = NotFound desc = not found"
        );
        assert_eq!(err.exit_code(), 1);
        // r/a once, r/b with every retry, r/c never.
        let mut want = vec!["r/a:1".to_string()];
        want.extend(std::iter::repeat_n(
            "r/b:2".to_string(),
            PULL_IMAGE_RETRY as usize,
        ));
        assert_eq!(*rt.pulls.borrow(), want);
        assert_eq!(out.text(), "[config/images] Pulled r/a:1\n");
    }
}
