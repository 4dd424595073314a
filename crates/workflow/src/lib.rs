//! A generic phase engine.
//!
//! A workflow is a static tree of phases (name, help, sub-phases, run, run-if, flags). The engine
//! filters and skips phases with subtree semantics and generates the help text of the tree.
//! It knows nothing of kubeadm or of a command-line parser.
