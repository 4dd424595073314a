//! `to_string` against `sigs.k8s.io/yaml.JSONToYAML` output recorded by the Go oracle
//! (`tests/golden/j2y.jsonl`, see `tests/golden/README.md`).

use serde_json::Value;

#[test]
fn json_to_yaml_matches_go() {
    let golden = include_str!("golden/j2y.jsonl");
    let mut compared = 0;
    let mut failures = Vec::new();
    for (n, line) in golden.lines().enumerate() {
        let row: Value = serde_json::from_str(line).expect("golden row is JSON");
        let input = row["in"].as_str().expect("in is a string");
        // Cases the Go side rejects (yaml.v2 cannot read some JSON) have no expected output.
        let Some(expected) = row["out"].as_str() else {
            continue;
        };
        let value: Value = serde_json::from_str(input).expect("golden input is JSON");
        let got = kubeadm_yaml::to_string(&value);
        compared += 1;
        if got != expected {
            failures.push(format!(
                "line {}: input {input}\n--- expected\n{expected}--- got\n{got}",
                n + 1
            ));
        }
    }
    assert!(compared > 1000, "only {compared} cases compared");
    assert!(
        failures.is_empty(),
        "{} of {compared} cases differ:\n{}",
        failures.len(),
        failures.iter().take(15).cloned().collect::<Vec<_>>().join("\n")
    );
}
