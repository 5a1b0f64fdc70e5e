package cmd

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/scale-preview/scale-preview/pkg/source"
)

// fileObjects are every object a snapshot file holds that the reader keeps
// (nodes, pods, budgets, quotas, revisions and the pods' owners), for a fake
// API server that serves the file's state live.
func fileObjects(t *testing.T, file, namespace string) []runtime.Object {
	t.Helper()
	cl, err := source.ReadClusterFiles([]string{file}, nil, namespace)
	if err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	add := func(o runtime.Object) { objs = append(objs, o) }
	each(cl.Nodes, add)
	each(cl.Pods, add)
	each(cl.PDBs, add)
	each(cl.Quotas, add)
	each(cl.Revisions, add)
	w := cl.Workloads
	each(w.Deployments, add)
	each(w.ReplicaSets, add)
	each(w.StatefulSets, add)
	each(w.DaemonSets, add)
	each(w.ReplicationControllers, add)
	each(w.Jobs, add)
	return objs
}

func each[T runtime.Object](items []T, add func(runtime.Object)) {
	for _, o := range items {
		add(o)
	}
}

// exampleArgs runs head (a mode and its target) on a shipped example file
// at a fixed time.
func exampleArgs(file string, head []string, now string, args ...string) []string {
	return append(append(slices.Clone(head), "-f", file, "--now", now), args...)
}

// exampleVariant: the same on a copy of the example with edit applied.
func exampleVariant(file string, head []string, now string, edit func(items []map[string]any) []map[string]any, args ...string) func(*testing.T) []string {
	return func(t *testing.T) []string {
		t.Helper()
		return exampleArgs(fileVariant(t, file, edit), head, now, args...)
	}
}

// modeBadInput is one bad input of a mode's own matrix (drainMatrix,
// rolloutMatrix, ...); TestBadInputMatrix runs them with its own.
type modeBadInput struct {
	name  string
	args  func(*testing.T) []string
	code  int
	words []string
}

// staticArgs: arguments that need no file written first.
func staticArgs(args ...string) func(*testing.T) []string {
	return func(*testing.T) []string { return args }
}
