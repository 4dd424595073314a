//! The `--patches` directory of `init` and `join`, read where a phase first needs it, as upstream's
//! `GetPatchManagerForPath` with its per-process cache: the `[patches]` lines are printed there, once
//! per run (a joining control plane's phases share the join's), and a directory that cannot be read
//! fails the phase that needed it, not the command before its first phase.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use kubeadm_core::patches::{PatchError, PatchManager};

/// Reads the patch directory (the files below it, parsed into patch sets).
pub type ReadPatches = Box<dyn Fn() -> Result<PatchManager, PatchError> + Send + Sync>;

/// A patch directory read at most once, announced at most once; clones share both.
#[derive(Clone)]
pub struct Patches(Arc<Inner>);

struct Inner {
    dir: String,
    read: ReadPatches,
    read_once: OnceLock<Result<PatchManager, PatchError>>,
    announced: AtomicBool,
}

impl std::fmt::Debug for Patches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Patches")
            .field("dir", &self.0.dir)
            .finish_non_exhaustive()
    }
}

impl Patches {
    /// The directory `dir`, read by `read` when first needed.
    pub fn new(dir: impl Into<String>, read: ReadPatches) -> Patches {
        Patches(Arc::new(Inner {
            dir: dir.into(),
            read,
            read_once: OnceLock::new(),
            announced: AtomicBool::new(false),
        }))
    }

    /// The patch sets, read now if not yet, without printing anything (to check them all before a
    /// phase writes its first file).
    pub fn peek(&self) -> Result<&PatchManager, &PatchError> {
        self.0.read_once.get_or_init(|| (self.0.read)()).as_ref()
    }

    /// The patch sets for a phase that applies them: the first call in the run prints upstream's
    /// `[patches]` lines through `say` (on an error, the `Reading patches from path` line alone).
    pub fn get(&self, say: &dyn Fn(&str)) -> Result<&PatchManager, PatchError> {
        let read = self.peek();
        if !self.0.announced.swap(true, Ordering::SeqCst) {
            match read {
                Ok(pm) => pm.messages().iter().for_each(|m| say(m)),
                Err(_) => say(&format!(
                    "[patches] Reading patches from path {}",
                    kubeadm_api::gofmt::quote(&self.0.dir)
                )),
            }
        }
        read.map_err(Clone::clone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubeadm_core::patches::PatchFile;
    use std::sync::Mutex;
    use std::sync::atomic::AtomicUsize;

    fn reading(files: Vec<PatchFile>, reads: Arc<AtomicUsize>) -> ReadPatches {
        Box::new(move || {
            reads.fetch_add(1, Ordering::SeqCst);
            PatchManager::from_files("/patches", &files)
        })
    }

    #[test]
    fn read_once_at_first_use_and_announced_once_across_clones() {
        let reads = Arc::new(AtomicUsize::new(0));
        let files = vec![PatchFile {
            path: "kube-apiserver0+strategic.yaml".into(),
            content: b"metadata: {annotations: {a: b}}".to_vec(),
        }];
        let patches = Patches::new("/patches", reading(files, reads.clone()));
        assert_eq!(
            reads.load(Ordering::SeqCst),
            0,
            "nothing read before a phase needs it"
        );
        let said = Mutex::new(Vec::new());
        let say = |l: &str| said.lock().expect("lock").push(l.to_string());
        assert!(patches.peek().is_ok());
        assert!(said.lock().expect("lock").is_empty(), "peek prints nothing");
        let shared = patches.clone();
        assert!(shared.get(&say).is_ok());
        assert!(patches.get(&say).is_ok());
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        assert_eq!(
            *said.lock().expect("lock"),
            [
                "[patches] Reading patches from path \"/patches\"",
                "[patches] Found the following patch files: [kube-apiserver0+strategic.yaml]"
            ]
        );
    }

    #[test]
    fn an_unreadable_directory_fails_each_use_and_says_where_it_read_once() {
        let patches = Patches::new(
            "/nope",
            Box::new(|| {
                Err(PatchError::unreadable_directory(
                    "/nope",
                    "no such file or directory",
                ))
            }),
        );
        let said = Mutex::new(Vec::new());
        let say = |l: &str| said.lock().expect("lock").push(l.to_string());
        assert!(patches.get(&say).is_err());
        assert!(patches.get(&say).is_err());
        assert_eq!(
            *said.lock().expect("lock"),
            ["[patches] Reading patches from path \"/nope\""]
        );
    }
}
