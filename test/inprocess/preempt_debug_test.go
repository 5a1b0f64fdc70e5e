package inprocess

import (
	"os"
	"strconv"
	"testing"
)

func TestPreemptDebug(t *testing.T) {
	t.Parallel()
	seed, err := strconv.ParseUint(os.Getenv("PREEMPT_DEBUG"), 10, 64)
	if err != nil {
		t.Skip()
	}
	sc, err := preemptGenerate(seed)
	if err != nil {
		t.Fatal(err)
	}
	pre := sc.preemptor
	t.Logf("preemptor prio %d req %v ports %v aff %+v spread %+v sel %v tol %v nom %q", *pre.Spec.Priority, pre.Spec.Containers[0].Resources.Requests, pre.Spec.Containers[0].Ports, pre.Spec.Affinity, pre.Spec.TopologySpreadConstraints, pre.Spec.NodeSelector, pre.Spec.Tolerations, pre.Status.NominatedNodeName)
	for _, n := range sc.nodes {
		t.Logf("node %s %v alloc %v taints %v unsched %v", n.Name, n.Labels, n.Status.Allocatable, n.Spec.Taints, n.Spec.Unschedulable)
	}
	for _, p := range sc.pods {
		t.Logf("pod %s node %q nom %q prio %d app %s req %v start %v ports %v anti %v phase %s del %v", p.Name, p.Spec.NodeName, p.Status.NominatedNodeName, *p.Spec.Priority, p.Labels["app"], p.Spec.Containers[0].Resources.Requests, p.Status.StartTime, p.Spec.Containers[0].Ports, p.Spec.Affinity, p.Status.Phase, p.DeletionTimestamp)
	}
	for _, b := range sc.pdbs {
		t.Logf("pdb %s %v allowed %d", b.Name, b.Spec.Selector.MatchLabels, b.Status.DisruptionsAllowed)
	}
	pred, _ := preemptPredict(sc)
	t.Logf("pred %+v", pred)
	real, err := preemptRunReal(sc)
	t.Logf("real %v %v", real, err)
}
