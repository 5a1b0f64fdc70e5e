package source

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// sameSnapshot fails unless the streaming reader, when it takes the input,
// gives exactly what the general reader gives.
func sameSnapshot(t *testing.T, name string, data []byte, wantStreamed bool) {
	t.Helper()
	whole, wholeErr := readWhole("-", data, "dflt")
	streamed, err := streamRead(bytes.NewReader(data), "dflt")
	if err != nil {
		if !errors.Is(err, errSlowPath) {
			t.Fatalf("%s: streaming error %v is not a hand-over", name, err)
		}
		if wantStreamed {
			t.Errorf("%s: handed over to the general reader (general reader: %v)", name, wholeErr)
		}
		return
	}
	if wholeErr != nil {
		if usable(streamed) {
			t.Errorf("%s: streamed fine but the general reader fails: %v", name, wholeErr)
		}
		return
	}
	if !equality.Semantic.DeepEqual(whole, streamed) {
		t.Errorf("%s: streamed snapshot differs from the general reader's: %s", name, firstDiff(whole, streamed))
	}
}

func firstDiff(a, b *snapshot.Snapshot) string {
	if len(a.Pods) != len(b.Pods) {
		return fmt.Sprintf("%d pods, streamed %d", len(a.Pods), len(b.Pods))
	}
	for i := range a.Pods {
		if !equality.Semantic.DeepEqual(a.Pods[i], b.Pods[i]) {
			return fmt.Sprintf("pod %s: %+v, streamed %+v", a.Pods[i].Name, a.Pods[i], b.Pods[i])
		}
	}
	return "objects other than pods"
}

// Every file the project's tests read, through both readers.
func TestStreamMatchesGeneralReader(t *testing.T) {
	var files []string
	for _, g := range []string{"testdata/*", "../../examples/*", "../cmd/testdata/*.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("only %d files found", len(files))
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.IsDir() {
			continue // the fuzz corpus
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameSnapshot(t, f, data, false)
	}
}

// kubectl's shapes, JSON and YAML, must be streamed, and equal.
func TestStreamGeneratedSnapshot(t *testing.T) {
	var js, ys bytes.Buffer
	if err := sourcetest.WriteJSON(&js, 300); err != nil {
		t.Fatal(err)
	}
	if err := sourcetest.WriteYAML(&ys, 300); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "json", js.Bytes(), true)
	sameSnapshot(t, "yaml", ys.Bytes(), true)
	// Indented item dashes, several documents, a JSON document in YAML.
	indented := strings.ReplaceAll(ys.String(), "\n  ", "\n    ")
	indented = strings.ReplaceAll(indented, "\n- ", "\n  - ")
	sameSnapshot(t, "yaml-indented", []byte(indented), true)
	two := ys.String() + "---\n# again\n" + ys.String()
	sameSnapshot(t, "yaml-two-docs", []byte(two), true)
	s, err := streamRead(bytes.NewReader(js.Bytes()), "x")
	if err != nil || len(s.Pods) != 300 || len(s.Deployments) != 1 || len(s.ReplicaSets) != 1 {
		t.Fatalf("generated JSON: %v, %+v", err, s)
	}
	if p := s.Pods[0]; p.ManagedFields != nil || p.Spec.Volumes != nil || p.Status.ContainerStatuses[0].Image != "" {
		t.Errorf("pod not trimmed: %+v", p)
	}
}

// Shapes the streaming reader hands over: the result must still be the
// general reader's.
func TestStreamHandsOver(t *testing.T) {
	for name, doc := range map[string]string{
		"item kind from list": `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}]}`,
		"nested list":         `{"kind":"List","apiVersion":"v1","items":[{"kind":"List","apiVersion":"v1","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}]}]}`,
		"empty list":          `{"kind":"List","apiVersion":"v1","items":[]}`,
		"no list kind":        `{"apiVersion":"v1","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}]}`,
		"bad pod":             `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"},"spec":{"containers":5}}`,
		"yaml sequence":       "- kind: Pod\n  apiVersion: v1\n",
		"yaml alias":          "kind: List\napiVersion: v1\nitems:\n- &p\n  kind: Pod\n  apiVersion: v1\n  metadata: {name: a}\n- *p\n",
		"yaml items mapping":  "kind: List\napiVersion: v1\nitems:\n  a: b\n",
		"yaml bad separator":  "kind: Pod\napiVersion: v1\n--- x\n",
		"json array":          `[{"kind":"Pod","apiVersion":"v1"}]`,
	} {
		sameSnapshot(t, name, []byte(doc), false)
		if _, err := streamRead(strings.NewReader(doc), "x"); !errors.Is(err, errSlowPath) {
			t.Errorf("%s: streamed (%v), want a hand-over", name, err)
		}
	}
}

// A YAML alias bomb ends in an error, quickly, in both readers.
func TestStreamAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("kind: Pod\napiVersion: v1\nmetadata:\n  name: bomb\n  annotations:\n    a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("    a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "bomb.yaml")
	if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(f, nil, "x")
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("alias bomb: %v, want a *FileError", err)
	}
}
