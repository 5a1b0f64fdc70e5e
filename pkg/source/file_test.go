package source

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

func readOK(t *testing.T, name string, stdin []byte, ns string) *snapshot.Snapshot {
	t.Helper()
	s, err := ReadFile(name, bytes.NewReader(stdin), ns)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", name, err)
	}
	return s
}

type counts struct{ deploy, rs, rc, sts, pods, claims, nodes, hpas, pdbs int }

func countOf(s *snapshot.Snapshot) counts {
	return counts{len(s.Deployments), len(s.ReplicaSets), len(s.ReplicationControllers), len(s.StatefulSets),
		len(s.Pods), len(s.Claims), len(s.Nodes), len(s.HPAs), len(s.PDBs)}
}

// A v1 List as `kubectl get deploy,rs,pods -o yaml` prints it.
func TestReadFileV1List(t *testing.T) {
	s := readOK(t, "../../examples/web.yaml", nil, "ignored")
	if got, want := countOf(s), (counts{deploy: 1, rs: 1, pods: 6}); got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	if d := s.Deployments[0]; d.Name != "web" || d.Namespace != "shop" || *d.Spec.Replicas != 6 {
		t.Errorf("deployment %s/%s replicas %d", d.Namespace, d.Name, *d.Spec.Replicas)
	}
	for _, p := range s.Pods {
		if p.Namespace != "shop" {
			t.Errorf("pod %s in namespace %q: the file's namespace must win over the default", p.Name, p.Namespace)
		}
	}
	// Typed fields survive the conversion.
	var p1 *corev1.Pod
	for _, p := range s.Pods {
		if p.Name == "web-7d9f8c6b5-p1xq" {
			p1 = p
		}
	}
	if p1 == nil {
		t.Fatal("pod web-7d9f8c6b5-p1xq missing")
	}
	if p1.Spec.NodeName != "node-a" || string(p1.UID) != "c1a4f0e2-0000-4000-8000-000000000001" || len(p1.OwnerReferences) != 1 {
		t.Errorf("pod fields lost: node %q uid %q owners %v", p1.Spec.NodeName, p1.UID, p1.OwnerReferences)
	}
	if !p1.CreationTimestamp.Time.Equal(time.Date(2025, 1, 1, 10, 59, 50, 0, time.UTC)) {
		t.Errorf("creationTimestamp %v", p1.CreationTimestamp)
	}
	if !s.ClaimsKnown {
		t.Error("ClaimsKnown false for a file")
	}
}

// Multi-document YAML: every kind the snapshot keeps is read, other kinds
// (ConfigMap, Service, autoscaling/v1 HPAs) are skipped, and objects
// without a namespace get the default one.
func TestReadFileMultiDocumentYAML(t *testing.T) {
	s := readOK(t, "testdata/multi.yaml", nil, "shop")
	want := counts{deploy: 1, rs: 1, rc: 1, sts: 1, pods: 1, claims: 1, nodes: 1, hpas: 1, pdbs: 1}
	if got := countOf(s); got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	if ns := s.Deployments[0].Namespace; ns != "shop" {
		t.Errorf("deployment namespace %q, want the default shop", ns)
	}
	if ns := s.ReplicaSets[0].Namespace; ns != "other" {
		t.Errorf("replicaset namespace %q, want its own (other)", ns)
	}
	p := s.Pods[0]
	if p.Namespace != "shop" || p.Annotations["controller.kubernetes.io/pod-deletion-cost"] != "-7" || p.Status.Phase != "Running" || len(p.Status.Conditions) != 1 {
		t.Errorf("pod %+v", p)
	}
	if s.HPAs[0].Name != "web" {
		t.Errorf("HPA %s kept, want the autoscaling/v2 one", s.HPAs[0].Name)
	}
	if s.ReplicationControllers[0].Spec.Selector["app"] != "legacy" {
		t.Errorf("rc selector %v", s.ReplicationControllers[0].Spec.Selector)
	}
}

func TestReadFileJSON(t *testing.T) {
	s := readOK(t, "testdata/pods.json", nil, "default")
	if got, want := countOf(s), (counts{rs: 1, pods: 1}); got != want {
		t.Fatalf("JSON list: counts %+v, want %+v", got, want)
	}
	if p := s.Pods[0]; p.Namespace != "prod" || p.Status.Phase != "Pending" || p.OwnerReferences[0].UID != "rs-uid" {
		t.Errorf("pod %+v", p)
	}
	s = readOK(t, "testdata/pod.json", nil, "default")
	if len(s.Pods) != 1 || s.Pods[0].Name != "solo" || s.Pods[0].Namespace != "default" {
		t.Errorf("single JSON object: %+v", s.Pods)
	}
}

func TestReadFileStdin(t *testing.T) {
	data, err := os.ReadFile("../../examples/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := readOK(t, "-", data, "default")
	if got, want := countOf(s), (counts{deploy: 1, rs: 1, pods: 6}); got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	// A JSON object on stdin.
	data, err = os.ReadFile("testdata/pod.json")
	if err != nil {
		t.Fatal(err)
	}
	if s := readOK(t, "-", data, "ns1"); len(s.Pods) != 1 || s.Pods[0].Namespace != "ns1" {
		t.Errorf("stdin JSON: %+v", s.Pods)
	}
	// Errors name standard input.
	_, err = ReadFile("-", strings.NewReader(""), "default")
	var fe *FileError
	if !errors.As(err, &fe) || fe.Name != "standard input" || !strings.Contains(err.Error(), "standard input") {
		t.Errorf("empty stdin: %v", err)
	}
}

func TestReadFileSkipsUnknownKinds(t *testing.T) {
	// Only unknown kinds: nothing to predict from, which is a file error.
	_, err := ReadFile("testdata/unknown-only.yaml", nil, "default")
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "holds no Deployment") {
		t.Errorf("unknown kinds only: %v, want a *FileError saying it holds nothing usable", err)
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, want string
	}{
		{"testdata/malformed.yaml", "malformed.yaml"},
		{"testdata/nokind.yaml", "nokind.yaml"},
		{"testdata/wrongtype.yaml", "Pod odd"},
		{"testdata/blank.yaml", "it is empty"},
		{empty, "it is empty"},
		{filepath.Join(dir, "missing.yaml"), "missing.yaml"},
	} {
		s, err := ReadFile(tc.file, nil, "default")
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("%s: err %v (%T), snapshot %v; want a *FileError", tc.file, err, err, s)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "cannot use ") {
			t.Errorf("%s: message %q, want it to start with \"cannot use\" and mention %q", tc.file, err, tc.want)
		}
		if fe.Unwrap() == nil {
			t.Errorf("%s: FileError without a cause", tc.file)
		}
	}
	_, err := ReadFile(filepath.Join(dir, "missing.yaml"), nil, "default")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v does not wrap fs.ErrNotExist", err)
	}
}
