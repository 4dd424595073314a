//! `-o jsonpath|jsonpath-as-json|jsonpath-file|go-template|go-template-file|template|templatefile`
//! against upstream v1.25.16 on `kubeadm config images list` (no cluster needed): for each
//! template, standard output, the error lines and the exit code (3 where upstream exits 1 on the
//! bad template, as tests/corpus/deliberate-differences.txt allows) must be upstream's. Covers
//! the JSONPath and template engines' output forms, ranges, filters, slices, literals, functions,
//! missing keys with and without `--allow-missing-template-keys=false`, named templates (`define`,
//! `template`, `block`), `break` and `continue`, `slice` and `call`, parse errors and missing
//! template files.
// Tests run the binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use kubeadm_testkit::oracle::{expected_code, run, upstream_kubeadm};

const TEMPLATES: &[&str] = &[
    // JSONPath.
    "jsonpath={.images}",
    "jsonpath={.images[0]}",
    "jsonpath={.images[*]}",
    "jsonpath={.images[1:3]} {.kind}",
    "jsonpath={.images[-1:]}",
    "jsonpath={.images[0:6:2]}",
    "jsonpath={.images[9]}",
    "jsonpath={.images[3:1]}",
    "jsonpath={.images[::0]}",
    "jsonpath={range .images[*]}{@}{\"\\n\"}{end}",
    "jsonpath={range .images[*]}[{@}]{'\\t'}{end}done",
    "jsonpath={.images[0,2]}",
    "jsonpath={.images[?(@==\"registry.k8s.io/pause:3.8\")]}",
    "jsonpath={.images[?(@!=\"registry.k8s.io/pause:3.8\")]}",
    "jsonpath={.images[?(@<\"registry.k8s.io/kube-d\")]}",
    "jsonpath={.images[?(@>=1)]}",
    "jsonpath={..kind}",
    "jsonpath={$.apiVersion}",
    "jsonpath={@}",
    "jsonpath={.missing}",
    "jsonpath={.kind.missing}",
    "jsonpath={.images.x}",
    "jsonpath=.images[0]",
    "jsonpath=plain text",
    "jsonpath={true} {12} {-1.5} {\"a\\\"b\"}",
    "jsonpath={.images[}",
    "jsonpath={.kind",
    "jsonpath={.images[a]}",
    "jsonpath={end}",
    "jsonpath={foo}",
    "jsonpath={#}",
    "jsonpath",
    "jsonpath=",
    "jsonpath-as-json={.images[*]}",
    "jsonpath-as-json={.kind}{.images[0]}",
    "jsonpath-as-json={.missing}",
    "jsonpath-as-json={@}",
    // Go templates.
    "go-template={{.kind}}",
    "go-template={{.}}",
    "go-template={{.images}}",
    "go-template={{range .images}}{{.}}{{\"\\n\"}}{{end}}",
    "template={{range $i, $e := .images}}{{$i}}={{$e}} {{end}}",
    "go-template={{range .missing}}x{{else}}empty{{end}}",
    "go-template={{if eq .kind \"Images\"}}yes{{else}}no{{end}}",
    "go-template={{if ne .kind \"Images\"}}yes{{else if .images}}many{{end}}",
    "go-template={{with .images}}{{index . 0}}{{end}}",
    "go-template={{$k := .kind}}{{$k}}/{{$.apiVersion}}",
    "go-template={{ .images | len }}",
    "go-template={{printf \"%-40s|%5d|%q|%v\\n\" .kind (len .images) .apiVersion .images}}",
    "go-template={{print .kind 1 2 \"x\"}} {{println .kind 3}}",
    "go-template={{and .kind .missing}} {{or .missing .kind}} {{not .kind}}",
    "go-template={{lt 1 2}} {{le 2 2}} {{gt \"a\" \"b\"}} {{ge 3 4}}",
    "go-template={{html \"<a href='x'>&\"}} {{js \"it's <b>\"}} {{urlquery \"a b&c=d\"}}",
    "go-template={{base64decode \"aGVsbG8=\"}}",
    "go-template={{base64decode \"aGVsbG8\"}}",
    "go-template=  {{- .kind -}}  \n {{/* a comment */}}end",
    "go-template={{.missing}}",
    "go-template={{.missing.deeper}}",
    "go-template={{.kind.foo}}",
    "go-template={{index .images 99}}",
    "go-template={{eq 1 \"a\"}}",
    "go-template={{.x",
    "go-template={{foo}}",
    "go-template={{end}}",
    "go-template={{if .kind}}x",
    "go-template={{$x}}",
    // Named templates, break and continue, slice and call.
    "go-template={{define \"x\"}}X{{.}}X{{end}}a{{template \"x\" .kind}}b{{template \"x\"}}",
    "go-template={{block \"b\" .kind}}[{{.}}]{{end}}",
    "go-template={{block \"b\" .kind}}[{{.}}]{{end}}{{template \"b\" .apiVersion}}",
    "go-template={{define \"x\"}}{{$}}{{end}}{{template \"x\" .kind}}",
    "go-template={{define \"x\"}}{{.missing.a}}{{.kind.z}}{{end}}{{template \"x\" .}}",
    "go-template={{define \"x\"}}\n{{.kind}}{{len 3}}{{end}}l1\n{{template \"x\" .}}",
    "go-template={{template \"nope\"}}",
    "go-template={{template .kind}}",
    "go-template={{define \"x\"}}a{{end}}{{define \"x\"}}b{{end}}{{template \"x\"}}",
    "go-template={{define \"x\"}}{{end}}{{define \"x\"}}b{{end}}{{template \"x\"}}",
    "go-template={{define \"output\"}}from a define{{end}}",
    "go-template={{if true}}{{define \"x\"}}a{{end}}{{end}}",
    "go-template={{range $i, $e := .images}}{{if eq $i 2}}{{break}}{{end}}{{$e}} {{end}}",
    "go-template={{range $i, $e := .images}}{{if eq $i 2}}{{continue}}{{end}}{{$i}} {{end}}",
    "go-template={{range .images}}{{range .missing}}{{else}}{{break}}{{end}}x{{end}}y",
    "go-template={{break}}",
    "go-template={{if true}}{{continue}}{{end}}",
    "go-template={{range .images}}{{break 1}}{{end}}",
    "go-template={{slice .kind 1 3}} {{slice .images 1}} {{slice .kind}} {{slice .images 2 4 5}}",
    "go-template={{slice .images 0 8}}",
    "go-template={{slice .images 0 9}}",
    "go-template={{slice .kind 3 1}}",
    "go-template={{slice .kind 1 99}}",
    "go-template={{slice .kind 0 1 2}}",
    "go-template={{slice .images 0 1 2 3}}",
    "go-template={{slice .missing}}",
    "go-template={{slice .images \"a\"}}",
    "go-template={{slice true}}",
    "go-template={{call .kind}}",
    "go-template={{call .missing}}",
    "go-template={{call}}",
    "go-template={{call 3}} {{len 3}}",
    "go-template={{define \"x\"}}{{template \"x\"}}{{end}}{{template \"x\"}}",
    "go-template={{index 3 1}}",
    "go-template={{slice 3 1}}",
    "go-template={{index .images 1.5}}",
    "go-template={{end .kind}}",
    "go-template={{if .kind}}{{end .kind}}",
    "go-template={{if .kind}}{{end 12}}",
    "go-template={{if .kind}}{{end .averyveryverylongfield}}",
    "go-template={{if .kind}}{{end \"s\"}}",
    "go-template={{if .kind}}{{end $}}",
    "go-template={{if .kind}}{{end .}}",
    "go-template={{if .kind}}{{end nil}}",
    "go-template={{if .kind}}{{end printf}}",
    "go-template={{define \"x\" 1}}{{end}}",
    "go-template={{define 1}}{{end}}",
    "go-template={{block \"x\"}}{{end}}",
    "go-template={{define \"x\"}}{{else}}{{end}}",
    "go-template={{define \"x\"}}",
    "go-template",
    "templatefile=",
    "go-template-file=/nonexistent/template",
    "jsonpath-file=/nonexistent/template",
    "templatefile=/nonexistent/template",
];

/// Runs upstream and ours with `args` and asserts the same outcome.
fn same(dir: &Path, args: &[&str]) {
    let mut full = vec!["config", "images", "list", "--kubernetes-version", "v1.25.16"];
    full.extend_from_slice(args);
    let theirs = run(&upstream_kubeadm(), &full, dir, &[]);
    let ours = run(Path::new(env!("CARGO_BIN_EXE_kubeadm")), &full, dir, &[]);
    let errors = |s: &str| -> String {
        s.lines()
            .filter(|l| {
                !(l.len() > 5 && l.as_bytes()[1..5].iter().all(u8::is_ascii_digit) && l.contains("] "))
            })
            .map(|l| format!("{l}\n"))
            .collect()
    };
    assert_eq!(ours.stdout, theirs.stdout, "stdout of {args:?}");
    assert_eq!(errors(&ours.stderr), errors(&theirs.stderr), "stderr of {args:?}");
    assert_eq!(
        ours.code,
        expected_code(&theirs),
        "exit code of {args:?}\n{}",
        theirs.stderr
    );
}

#[test]
fn template_printers_match_upstream() {
    let dir = tempfile::tempdir().expect("tempdir");
    for t in TEMPLATES {
        same(dir.path(), &["-o", t]);
        same(
            dir.path(),
            &["--experimental-output", t, "--allow-missing-template-keys=false"],
        );
    }
}

#[test]
fn template_files_match_upstream() {
    let dir = tempfile::tempdir().expect("tempdir");
    let jp = dir.path().join("t.jsonpath");
    std::fs::write(&jp, "{range .images[*]}- {@}\n{end}").expect("write");
    let gt = dir.path().join("t.tmpl");
    std::fs::write(&gt, "{{range .images}}* {{.}}\n{{end}}{{.kind}}\n").expect("write");
    let bad = dir.path().join("bad.tmpl");
    std::fs::write(&bad, "line one\n{{.kind}}\n{{if}}\n").expect("write");
    let jp = format!("jsonpath-file={}", jp.display());
    let gt1 = format!("go-template-file={}", gt.display());
    let gt2 = format!("templatefile={}", gt.display());
    let bad = format!("go-template-file={}", bad.display());
    let dir_as_file = format!("jsonpath-file={}", dir.path().display());
    for t in [&jp, &gt1, &gt2, &bad, &dir_as_file] {
        same(dir.path(), &["-o", t]);
    }
}
