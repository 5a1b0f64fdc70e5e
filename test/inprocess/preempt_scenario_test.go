package inprocess

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/test/internal/preemptjudge"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/preemptgen"
)

// preemptScenario is one random cluster and a pending pod, from the
// generator the recorded releases use too (test/versions/oraclegen/preemptgen).
type preemptScenario struct {
	seed      uint64
	nodes     []*corev1.Node
	pods      []*corev1.Pod
	pdbs      []*policyv1.PodDisruptionBudget
	preemptor *corev1.Pod
	what      string
}

func preemptGenerate(seed uint64) (*preemptScenario, error) {
	gen := preemptgen.Generate(seed, rules.Newest)
	c, err := preemptjudge.Decode(gen)
	if err != nil {
		return nil, err
	}
	return &preemptScenario{seed: seed, nodes: c.Nodes, pods: c.Pods, pdbs: c.PDBs, preemptor: c.Preemptor, what: gen.What}, nil
}
