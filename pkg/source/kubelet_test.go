package source

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzKubeletDocs: the summary and configz parsers and the node reader take
// any bytes without panicking; every error is one line, and a file's error
// a FileError.
func FuzzKubeletDocs(f *testing.F) {
	for _, name := range []string{"../../examples/node/summary.json", "../../examples/node/configz.json", "../../examples/node/node.yaml"} {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"node": {"nodeName": "n"}, "pods": [{"podRef": {}}]}`))
	f.Add([]byte(`{"kubeletconfig": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := ParseSummary(data); err == nil && s.Node.NodeName == "" {
			t.Fatal("a summary without a node name")
		} else if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error %q", err)
		}
		if c, err := ParseConfigz(data); err == nil && (len(c) == 0 || c[0] != '{') {
			t.Fatalf("configz %q is not an object", c)
		}
		if _, err := ReadNodeFiles([]string{"-"}, bytes.NewReader(data)); err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a FileError: %v", err, err)
			}
		}
	})
}

func TestKubeletDocsByShape(t *testing.T) {
	s, err := ReadNodeFiles([]string{"../../examples/node/node.yaml", "../../examples/node/summary.json", "../../examples/node/configz.json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 1 || len(s.Pods) != 5 || len(s.Kubelet.Summaries) != 1 || len(s.Kubelet.Configs) != 1 {
		t.Fatalf("nodes %d pods %d summaries %d configs %d", len(s.Nodes), len(s.Pods), len(s.Kubelet.Summaries), len(s.Kubelet.Configs))
	}
	if p := s.Pods[0]; p.Spec.Priority == nil || len(p.Spec.Containers) == 0 {
		t.Error("a node preview's pods are trimmed")
	}
	// A scale-in does not take a summary for a workload file.
	if _, err := ReadFiles([]string{"../../examples/node/summary.json"}, nil, "default"); err == nil {
		t.Error("a stats summary read as a scale-in snapshot")
	}
}
