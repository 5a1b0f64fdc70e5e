// Command bigcluster writes issue 34's large cluster snapshot as one JSON
// List: identical nodes of 4 CPUs, 30 pods on each (150,000 pods on the
// default 5,000 nodes), the apps' Deployments, ReplicaSets and
// PodDisruptionBudgets, PriorityClasses, and the pending pod apps/urgent
// that must preempt. From test/:
//
//	go run ./perf/bigcluster -o /tmp/cluster.json [-nodes 5000] [-apps-per-class 10] [-zones 1]
//
// -apps-per-class 1000 spreads 3,000 Deployments over the slots, so that
// nodes alike in priorities lose pods of other Deployments (issue 40).
// -zones 3 splits the nodes into zones region-1a, -1b and -1c in node
// order (issue 42's outage of a zone).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

func main() {
	out := flag.String("o", "", "the file to write (required)")
	nodes := flag.Int("nodes", sourcetest.ClusterSize.Nodes, "how many nodes (30 pods each)")
	perClass := flag.Int("apps-per-class", 10, "how many Deployments each of the 3 priority classes has (at least 10)")
	zones := flag.Int("zones", 1, "how many zones the nodes are split into, in node order (1 to 26)")
	flag.Parse()
	if *out == "" || *nodes <= 0 || *perClass < 10 || *zones < 1 || *zones > 26 {
		fmt.Fprintln(os.Stderr, "usage: bigcluster -o FILE [-nodes N] [-apps-per-class N>=10] [-zones 1-26]")
		os.Exit(2)
	}
	if err := write(*out, sourcetest.ClusterSpec{Nodes: *nodes, AppsPerClass: *perClass, Zones: *zones}); err != nil {
		fmt.Fprintln(os.Stderr, "bigcluster:", err)
		os.Exit(1)
	}
}

func write(name string, spec sourcetest.ClusterSpec) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := sourcetest.WriteClusterJSON(f, spec); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
