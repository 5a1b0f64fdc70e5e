package source

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// The streaming cluster reader must read every file exactly as the general
// reader (kubectl's resource builder) does: the repository's files and a
// generated large-cluster file.
func TestClusterStreamMatchesGeneralReader(t *testing.T) {
	var files []string
	for _, g := range []string{"testdata/*", "../../examples/*", "../cmd/testdata/*.yaml", "../cmd/testdata/*.json"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	var big bytes.Buffer
	if err := sourcetest.WriteClusterJSON(&big, sourcetest.ClusterSpec{Nodes: 20}); err != nil {
		t.Fatal(err)
	}
	gen := filepath.Join(t.TempDir(), "cluster.json")
	if err := os.WriteFile(gen, big.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, gen)
	streamed := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // a directory
		}
		want, werr := readClusterGeneral(f, data, "default")
		got, serr := streamCluster(bytes.NewReader(data), "default")
		if serr != nil || len(got.Kinds) == 0 {
			t.Logf("%s: left to the general reader", f)
			continue
		}
		if werr != nil {
			t.Errorf("%s: the general reader fails (%v) where the stream reads", f, werr)
			continue
		}
		streamed++
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: the streamed cluster differs from the general reader's", f)
		}
	}
	if streamed < 8 {
		t.Fatalf("only %d files streamed", streamed)
	}
	t.Logf("%d files streamed, each equal to the general reader's", streamed)
}
