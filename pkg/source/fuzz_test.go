package source

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/complete"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// FuzzReadFile: any bytes give a snapshot or a FileError, never a panic,
// and never a snapshot with nothing the plugin models.
func FuzzReadFile(f *testing.F) {
	for _, name := range []string{"testdata/multi.yaml", "testdata/pods.json", "testdata/pod.json", "testdata/malformed.yaml", "../../examples/web.yaml"} {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(aliasBomb(9)))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte(`{"kind":"List","apiVersion":"v1","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadFile("-", bytes.NewReader(data), "default")
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a FileError: %v", err, err)
			}
			if strings.Contains(err.Error(), "\n") && len(strings.TrimSpace(err.Error())) == 0 {
				t.Fatalf("empty error")
			}
			return
		}
		if len(s.Pods)+len(s.ReplicaSets)+len(s.Deployments)+len(s.StatefulSets)+len(s.ReplicationControllers) == 0 {
			t.Fatal("a snapshot without any modelled object")
		}
		// What the loader lets through, the snapshot check must accept or
		// refuse with its own error before anything is predicted.
		if _, err := complete.Check(s, snapshot.Ref{Kind: snapshot.Deployment, Namespace: "default", Name: "web"}, false); err != nil {
			return
		}
		for _, p := range s.Pods {
			if p == nil || p.Name == "" || p.Namespace == "" {
				t.Fatalf("pod without name or namespace passed the checks: %+v", p)
			}
		}
	})
}

// aliasBomb is a "billion laughs" document: levels of nine aliases each,
// 9^levels strings once expanded.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: bomb}\n  data:\n    l0: &l0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < levels; i++ {
		prev := "l" + string(rune('0'+i-1))
		name := "l" + string(rune('0'+i))
		b.WriteString("    " + name + ": &" + name + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// An alias bomb is refused by the YAML decoder's alias limit instead of
// being expanded: the error comes back and memory stays small.
func TestAliasBombBounded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ReadFile("-", strings.NewReader(aliasBomb(10)), "default")
	runtime.ReadMemStats(&after)
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("err %v, want a FileError", err)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 256<<20 {
		t.Errorf("reading a 1 KB alias bomb allocated %d MiB", grown>>20)
	}
	t.Logf("%v; allocated %d KiB", err, (after.TotalAlloc-before.TotalAlloc)>>10)
}
