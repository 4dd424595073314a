//! Fakes shared by the preflight tests: a container runtime that is up or down, and a configuration
//! loader. Each test binary uses part of it.
#![allow(dead_code)]

use std::cell::RefCell;

use kubeadm_testkit::fakes::FakeHost;

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{InitConfig, load_init_config};
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_effects::cri::{CriCall, CriError, Image, PodSandbox, Runtime, RuntimeStatus, RuntimeVersion};
use kubeadm_phases::preflight::{Check, IgnoreSet, run_checks};

/// A runtime that is up or down, holds some images and records pulls.
#[derive(Debug, Default)]
pub struct FakeRuntime {
    pub down: bool,
    pub images: Vec<String>,
    pub pull_fails: bool,
    pub pulls: RefCell<Vec<String>>,
}

fn rpc(call: CriCall, msg: &str) -> CriError {
    CriError::Rpc {
        endpoint: "unix:///run/fake.sock".into(),
        call,
        code: "Unknown".into(),
        message: msg.into(),
    }
}

impl Runtime for FakeRuntime {
    fn endpoint(&self) -> &str {
        "unix:///run/fake.sock"
    }
    fn version(&self) -> Result<RuntimeVersion, CriError> {
        Err(rpc(CriCall::Version, "unused"))
    }
    fn status(&self) -> Result<RuntimeStatus, CriError> {
        if self.down {
            Err(rpc(CriCall::Status, "runtime down"))
        } else {
            Ok(RuntimeStatus::default())
        }
    }
    fn list_images(&self) -> Result<Vec<Image>, CriError> {
        Ok(Vec::new())
    }
    fn image_status(&self, image: &str) -> Result<Option<Image>, CriError> {
        if self.down {
            return Err(rpc(CriCall::ImageStatus(image.into()), "runtime down"));
        }
        Ok(self.images.iter().any(|i| i == image).then(Image::default))
    }
    fn pull_image_once(&self, image: &str) -> Result<String, CriError> {
        self.pulls.borrow_mut().push(image.to_string());
        if self.pull_fails {
            Err(rpc(CriCall::PullImage(image.into()), "no network"))
        } else {
            Ok(format!("sha256:{image}"))
        }
    }
    fn list_pod_sandboxes(&self) -> Result<Vec<PodSandbox>, CriError> {
        Ok(Vec::new())
    }
    fn stop_pod_sandbox(&self, _id: &str) -> Result<(), CriError> {
        Ok(())
    }
    fn remove_pod_sandbox(&self, _id: &str) -> Result<(), CriError> {
        Ok(())
    }
}

pub fn judge(check: Check, host: &FakeHost, runtime: &FakeRuntime) -> (Vec<String>, Vec<String>) {
    let run = run_checks(&[check], host, runtime, &IgnoreSet::default());
    let r = &run.results[0];
    (r.warnings.clone(), r.errors.clone())
}

/// Loads an init configuration as the CLI would, with this host's facts left empty (a loopback
/// address on `lo` for loopback advertise addresses).
pub fn load(text: &str) -> InitConfig {
    let host = HostFacts {
        loopback_address: "127.0.0.1".parse().ok(),
        ..HostFacts::default()
    };
    let mut token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").unwrap_or_default();
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut token,
        fetch_version: &kubeadm_api::version::offline,
    };
    load_init_config("cfg.yaml", text, &mut inputs).expect("valid config")
}
