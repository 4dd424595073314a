// Command goyaml is the test oracle for crates/yaml: it runs the Go YAML code Kubernetes uses
// (sigs.k8s.io/yaml v1.2.0 over gopkg.in/yaml.v2 v2.4.0) on cases read from stdin.
//
// Usage: goyaml MODE < cases.jsonl > results.jsonl
//
// Each input line is a JSON string holding the input text. Each output line is a JSON object
// {"in": <input text>, "out": <output text>} or {"in": ..., "err": <error message>}.
// MODE is one of:
//
//	j2y         yaml.JSONToYAML(in)
//	y2j         yaml.YAMLToJSON(in)
//	y2j-strict  yaml.YAMLToJSONStrict(in)
//	split       the documents apimachinery's YAMLReader (used by kubeadm's SplitYAMLDocuments)
//	            finds in the stream, as a JSON array of strings
//	docs        split, then YAMLToJSONStrict on each document: a JSON array of the documents
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// split reads documents the way kubeadm's SplitYAMLDocuments does.
func split(in []byte) ([]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewBuffer(in)))
	docs := []string{}
	for {
		b, err := reader.Read()
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			break
		}
		docs = append(docs, string(b))
	}
	return json.Marshal(docs)
}

// docs splits like split and converts each document with YAMLToJSONStrict.
func docs(in []byte) ([]byte, error) {
	parts, err := split(in)
	if err != nil {
		return nil, err
	}
	var texts []string
	if err := json.Unmarshal(parts, &texts); err != nil {
		return nil, err
	}
	values := []json.RawMessage{}
	for _, t := range texts {
		j, err := yaml.YAMLToJSONStrict([]byte(t))
		if err != nil {
			return nil, err
		}
		values = append(values, j)
	}
	return json.Marshal(values)
}

type result struct {
	In  string  `json:"in"`
	Out *string `json:"out,omitempty"`
	Err *string `json:"err,omitempty"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: goyaml j2y|y2j|y2j-strict|split|docs < cases.jsonl")
		os.Exit(2)
	}
	var convert func([]byte) ([]byte, error)
	switch os.Args[1] {
	case "j2y":
		convert = yaml.JSONToYAML
	case "y2j":
		convert = yaml.YAMLToJSON
	case "y2j-strict":
		convert = yaml.YAMLToJSONStrict
	case "split":
		convert = split
	case "docs":
		convert = docs
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		var text string
		if err := json.Unmarshal(in.Bytes(), &text); err != nil {
			fmt.Fprintf(os.Stderr, "bad input line: %v\n", err)
			os.Exit(2)
		}
		r := result{In: text}
		b, err := convert([]byte(text))
		if err != nil {
			msg := err.Error()
			r.Err = &msg
		} else {
			s := string(b)
			r.Out = &s
		}
		if err := enc.Encode(r); err != nil {
			fmt.Fprintf(os.Stderr, "write: %v\n", err)
			os.Exit(2)
		}
		// Flush per case so a driving process can stream cases one at a time.
		out.Flush()
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "read: %v\n", err)
		os.Exit(2)
	}
}
