package e2e

import (
	"fmt"
	"math/rand/v2"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// drainScenario is one seeded random cluster and one `kubectl drain`.
type drainScenario struct {
	index     int
	ns        string
	nodes     []drainNodeSpec
	workloads []*drainWorkload
	pdbs      []drainPDB
	drain     []string // nodes to drain, in order
	flags     []string // kubectl drain flags shared by the plugin
	saved     string   // the cluster before the drain, as a file for -f
}

type drainNodeSpec struct {
	name     string
	milliCPU int64
}

// drainWorkload is a Deployment, StatefulSet, DaemonSet, Job or bare Pod.
// Its pods carry app=NAME and tier=a|b; initial pods are bound by the test
// to placement[i] (DaemonSet pods go where their controller aims them).
type drainWorkload struct {
	kind       string
	name       string
	replicas   int
	milliCPU   int64
	emptyDir   bool
	neverReady bool // template label: no pod of it (replacements included) becomes Ready
	unready    int  // this many initial pods never become Ready (label set on them)
	tier       string
	grace      int64
	parallel   bool // StatefulSet podManagementPolicy Parallel
	placement  []string
	slot       map[string]int // pod name -> its index in placement, in the order the pods appeared
	// tolerations go into the template (the outage test's own seconds).
	tolerations []corev1.Toleration
}

type drainPDB struct {
	name           string
	selector       map[string]string
	minAvailable   *intstr.IntOrString
	maxUnavailable *intstr.IntOrString
	policy         string // "", IfHealthyBudget, AlwaysAllow
}

func (s *drainScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "drain scenario %d (ns %s): nodes", s.index, s.ns)
	for _, n := range s.nodes {
		fmt.Fprintf(&b, " %s(%dm)", n.name, n.milliCPU)
	}
	for _, w := range s.workloads {
		fmt.Fprintf(&b, "; %s %s x%d %dm tier=%s grace=%d", w.kind, w.name, w.replicas, w.milliCPU, w.tier, w.grace)
		if w.emptyDir {
			b.WriteString(" emptyDir")
		}
		if w.neverReady {
			b.WriteString(" never-ready")
		}
		if w.unready > 0 {
			fmt.Fprintf(&b, " unready=%d", w.unready)
		}
		if w.parallel {
			b.WriteString(" Parallel")
		}
		if len(w.placement) > 0 {
			fmt.Fprintf(&b, " on %v", w.placement)
		}
	}
	for _, p := range s.pdbs {
		fmt.Fprintf(&b, "; PDB %s %v", p.name, p.selector)
		if p.minAvailable != nil {
			fmt.Fprintf(&b, " minAvailable=%s", p.minAvailable.String())
		}
		if p.maxUnavailable != nil {
			fmt.Fprintf(&b, " maxUnavailable=%s", p.maxUnavailable.String())
		}
		if p.policy != "" {
			fmt.Fprintf(&b, " %s", p.policy)
		}
	}
	fmt.Fprintf(&b, "; drain %v %v", s.drain, s.flags)
	return b.String()
}

// randomDrainScenario builds scenario i from its own random stream.
func randomDrainScenario(seed uint64, i int) *drainScenario {
	rng := rand.New(rand.NewPCG(seed, 0xd7a1+uint64(i)))
	s := &drainScenario{index: i, ns: fmt.Sprintf("drain-%d", i)}
	nNodes := 2 + rng.IntN(3)
	for n := range nNodes {
		s.nodes = append(s.nodes, drainNodeSpec{name: fmt.Sprintf("d%d-n%d", i, n+1), milliCPU: int64(2000 + 1000*rng.IntN(3))})
	}
	free := map[string]int64{}
	for _, n := range s.nodes {
		free[n.name] = n.milliCPU
	}
	s.addWorkloads(rng, free)
	s.addPDBs(rng)
	s.pickDrain(rng)
	s.pickFlags(rng)
	return s
}

var drainCPUs = []int64{100, 200, 300, 500, 800, 1200, 1500, 1800}

func (s *drainScenario) addWorkloads(rng *rand.Rand, free map[string]int64) {
	nDeploy := 1 + rng.IntN(3)
	for d := range nDeploy {
		w := &drainWorkload{kind: "Deployment", name: fmt.Sprintf("web%d", d), replicas: 1 + rng.IntN(5),
			milliCPU: drainCPUs[rng.IntN(len(drainCPUs))], emptyDir: rng.IntN(5) == 0}
		if rng.IntN(8) == 0 {
			w.neverReady = true
		} else if rng.IntN(4) == 0 {
			w.unready = 1 + rng.IntN(2)
		}
		s.add(rng, w, free)
	}
	if rng.IntN(2) == 0 {
		s.add(rng, &drainWorkload{kind: "StatefulSet", name: "db", replicas: 1 + rng.IntN(3),
			milliCPU: drainCPUs[rng.IntN(4)], parallel: rng.IntN(2) == 0}, free)
	}
	if rng.IntN(3) == 0 {
		s.add(rng, &drainWorkload{kind: "DaemonSet", name: "agent", milliCPU: 50}, free)
	}
	if rng.IntN(3) == 0 {
		s.add(rng, &drainWorkload{kind: "Pod", name: "bare", replicas: 1, milliCPU: 100, emptyDir: rng.IntN(3) == 0}, free)
	}
	if rng.IntN(3) == 0 {
		s.add(rng, &drainWorkload{kind: "Job", name: "batch", replicas: 1 + rng.IntN(2), milliCPU: 200}, free)
	}
}

// add places the workload's pods on nodes with room (the scenario's own
// pods are bound by the test, so the placement is reproducible).
func (s *drainScenario) add(rng *rand.Rand, w *drainWorkload, free map[string]int64) {
	w.tier = []string{"a", "b"}[rng.IntN(2)]
	w.grace = int64(1 + rng.IntN(2))
	if w.unready > w.replicas {
		w.unready = w.replicas
	}
	if w.kind == "DaemonSet" {
		for _, n := range s.nodes {
			free[n.name] -= w.milliCPU
		}
		s.workloads = append(s.workloads, w)
		return
	}
	for range w.replicas {
		var fits []string
		for _, n := range s.nodes {
			if free[n.name] >= w.milliCPU+100 { // room for a DaemonSet pod added later
				fits = append(fits, n.name)
			}
		}
		if len(fits) == 0 {
			break
		}
		node := fits[rng.IntN(len(fits))]
		// Crowd the first node: it is drained most often.
		if rng.IntN(3) == 0 && free[s.nodes[0].name] >= w.milliCPU+100 {
			node = s.nodes[0].name
		}
		free[node] -= w.milliCPU
		w.placement = append(w.placement, node)
	}
	w.replicas = len(w.placement)
	if w.replicas == 0 {
		return
	}
	s.workloads = append(s.workloads, w)
}

// addPDBs puts budgets over some Deployments and the StatefulSet:
// integers and percentages, both unhealthyPodEvictionPolicy values, and
// sometimes a second budget over the same pods.
func (s *drainScenario) addPDBs(rng *rand.Rand) {
	for _, w := range s.workloads {
		if (w.kind != "Deployment" && w.kind != "StatefulSet") || rng.IntN(3) == 0 {
			continue
		}
		p := drainPDB{name: "pdb-" + w.name, selector: map[string]string{"app": w.name}}
		switch rng.IntN(5) {
		case 4: // no disruption ever allowed: the drain blocks
			p.minAvailable = ptrTo(intstr.FromInt32(int32(w.replicas)))
		case 0:
			p.minAvailable = ptrTo(intstr.FromInt32(int32(rng.IntN(w.replicas + 1))))
		case 1:
			p.minAvailable = ptrTo(intstr.FromString([]string{"50%", "60%", "100%"}[rng.IntN(3)]))
		case 2:
			p.maxUnavailable = ptrTo(intstr.FromInt32(int32(rng.IntN(3))))
		default:
			p.maxUnavailable = ptrTo(intstr.FromString([]string{"25%", "34%", "50%"}[rng.IntN(3)]))
		}
		p.policy = []string{"", "IfHealthyBudget", "AlwaysAllow"}[rng.IntN(3)]
		s.pdbs = append(s.pdbs, p)
		if rng.IntN(6) == 0 {
			s.pdbs = append(s.pdbs, drainPDB{name: "pdb-" + w.name + "-tier", selector: map[string]string{"app": w.name, "tier": w.tier},
				maxUnavailable: ptrTo(intstr.FromInt32(1))})
		}
	}
}

// pickDrain drains the crowded first node, sometimes a second one too
// (kubectl cordons both first, then drains them in order).
func (s *drainScenario) pickDrain(rng *rand.Rand) {
	s.drain = []string{s.nodes[0].name}
	if len(s.nodes) > 2 && rng.IntN(3) == 0 {
		s.drain = append(s.drain, s.nodes[1+rng.IntN(len(s.nodes)-1)].name)
	}
}

func (s *drainScenario) pickFlags(rng *rand.Rand) {
	maybe := func(p int, flag string) {
		if rng.IntN(100) < p {
			s.flags = append(s.flags, flag)
		}
	}
	maybe(75, "--ignore-daemonsets")
	maybe(70, "--delete-emptydir-data")
	maybe(60, "--force")
	maybe(12, "--disable-eviction")
	maybe(15, "--pod-selector=tier=a")
	maybe(10, "--pod-selector=tier!=b,app!=agent")
	maybe(25, "--grace-period=1")
	if n := countPrefix(s.flags, "--pod-selector="); n > 1 { // one selector flag
		s.flags = dropPrefixAfterFirst(s.flags, "--pod-selector=")
	}
}

func countPrefix(flags []string, prefix string) int {
	n := 0
	for _, f := range flags {
		if strings.HasPrefix(f, prefix) {
			n++
		}
	}
	return n
}

func dropPrefixAfterFirst(flags []string, prefix string) []string {
	var out []string
	seen := false
	for _, f := range flags {
		if strings.HasPrefix(f, prefix) {
			if seen {
				continue
			}
			seen = true
		}
		out = append(out, f)
	}
	return out
}

// pdbPodsOnDrained is the most pods one budget covers on the drained
// nodes: each may wait a retry period (5 s) for a replacement to be Ready.
func (s *drainScenario) pdbPodsOnDrained() int {
	most := 0
	for _, w := range s.workloads {
		n := 0
		for _, node := range w.placement {
			for _, d := range s.drain {
				if node == d {
					n++
				}
			}
		}
		most = max(most, n)
	}
	return most
}
