package source

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// BenchmarkReadFile reads a generated snapshot (a Deployment, its
// ReplicaSet and the pods, as kubectl prints them) in JSON and in YAML.
// SCALE_PREVIEW_BENCH_FILE names an existing file to read instead.
func BenchmarkReadFile(b *testing.B) {
	n := 20000
	if testing.Short() {
		n = 1000
	}
	dir := b.TempDir()
	files := map[string]func(*os.File) error{
		"json": func(f *os.File) error { return sourcetest.WriteJSON(f, n) },
		"yaml": func(f *os.File) error { return sourcetest.WriteYAML(f, n) },
	}
	for _, format := range []string{"json", "yaml"} {
		b.Run(format, func(b *testing.B) {
			name := os.Getenv("SCALE_PREVIEW_BENCH_" + format)
			if name == "" {
				name = filepath.Join(dir, "pods."+format)
				f, err := os.Create(name)
				if err != nil {
					b.Fatal(err)
				}
				if err := files[format](f); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
			st, _ := os.Stat(name)
			b.SetBytes(st.Size())
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, err := ReadFile(name, nil, "default")
				if err != nil || len(s.Pods) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadClusterFile reads issue 34's cluster (5,000 identical nodes,
// 150,000 pods, one JSON List; -short: 200 nodes) as pod/NAME reads it.
// SCALE_PREVIEW_BENCH_CLUSTER names an existing file to read instead.
func BenchmarkReadClusterFile(b *testing.B) {
	spec := sourcetest.ClusterSize
	if testing.Short() {
		spec.Nodes = 200
	}
	name := os.Getenv("SCALE_PREVIEW_BENCH_CLUSTER")
	if name == "" {
		name = filepath.Join(b.TempDir(), "cluster.json")
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if err := sourcetest.WriteClusterJSON(f, spec); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	st, _ := os.Stat(name)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c, err := ReadClusterFiles([]string{name}, nil, "default")
		if err != nil || len(c.Pods) == 0 || len(c.Nodes) == 0 {
			b.Fatal(err)
		}
	}
}
