package e2e

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// updateScenario is one seeded random workload and one rollout of it
// (`kubectl rollout restart` or `kubectl set image`), for TestRolloutUpdateE2E.
type updateScenario struct {
	index    int
	family   string
	ns       string
	kind     string // Deployment | StatefulSet | DaemonSet
	name     string
	replicas int
	milliCPU int64
	grace    int64
	nodes    []drainNodeSpec
	// placement of the initial pods (bound by the test; DaemonSet pods are
	// placed by the scheduler, one per node).
	placement []string
	unhealthy int // index (ordinal for StatefulSets) of an old pod that never turns Ready; -1 none

	// Deployment
	recreate        bool
	surge, unavail  *intstr.IntOrString // Deployment and DaemonSet budgets
	minReadySeconds int32
	midRollout      bool // an earlier release never turned Ready and is still rolling out

	// StatefulSet
	parallel      bool
	partition     int32
	stsUnavail    *intstr.IntOrString
	tightDSNode   string // DaemonSet: a node where a surge pod cannot fit
	pdb           *drainPDB
	quota         string // "" | "pods" | "cpu": a ResourceQuota at its limit
	newNeverReady bool   // the new revision never turns Ready
	change        string // restart | image | desired
	saved         string // the cluster before the rollout, for -f

	// change desired (desired_rollout_e2e_test.go): the manifest that
	// kubectl apply applies, and its replicas when it scales too (> 0).
	desiredFile     string
	desiredReplicas int
}

const (
	updateName     = "web"
	updateImage    = "registry.invalid/app:2"
	updateMidImage = "registry.invalid/app:bad"
	updateNewReady = 1500 * time.Millisecond // the new revision's Ready delay
)

// updateFamilies, in the order scenario i % len picks them.
var updateFamilies = []string{"rolling", "recreate", "mid-rollout", "min-ready", "tight", "quota", "never-ready", "statefulset", "daemonset"}

func (s *updateScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rollout scenario %d %s (ns %s): %s %s x%d %dm grace=%d; nodes", s.index, s.family, s.ns, s.kind, s.name, s.replicas, s.milliCPU, s.grace)
	for _, n := range s.nodes {
		fmt.Fprintf(&b, " %s(%dm)", n.name, n.milliCPU)
	}
	if len(s.placement) > 0 {
		fmt.Fprintf(&b, "; on %v", s.placement)
	}
	opt := func(cond bool, format string, args ...func() any) {
		if cond {
			vals := make([]any, len(args))
			for i, a := range args {
				vals[i] = a()
			}
			fmt.Fprintf(&b, "; "+format, vals...)
		}
	}
	opt(s.recreate, "Recreate")
	opt(s.surge != nil, "maxSurge=%s", func() any { return s.surge.String() })
	opt(s.unavail != nil, "maxUnavailable=%s", func() any { return s.unavail.String() })
	opt(s.minReadySeconds > 0, "minReadySeconds=%d", func() any { return s.minReadySeconds })
	opt(s.midRollout, "mid-rollout (an earlier release never Ready)")
	opt(s.kind == "StatefulSet", "parallel=%v partition=%d", func() any { return s.parallel }, func() any { return s.partition })
	opt(s.stsUnavail != nil, "sts maxUnavailable=%s", func() any { return s.stsUnavail.String() })
	opt(s.unhealthy >= 0, "old pod #%d never Ready", func() any { return s.unhealthy })
	opt(s.tightDSNode != "", "no room for a surge pod on %s", func() any { return s.tightDSNode })
	opt(s.pdb != nil, "PDB %s", func() any { return pdbString(s.pdb) })
	opt(s.quota != "", "ResourceQuota %s at its limit", func() any { return s.quota })
	opt(s.newNeverReady, "the new revision never turns Ready")
	fmt.Fprintf(&b, "; change %s", s.change)
	return b.String()
}

func pdbString(p *drainPDB) string {
	switch {
	case p.minAvailable != nil:
		return "minAvailable=" + p.minAvailable.String()
	case p.maxUnavailable != nil:
		return "maxUnavailable=" + p.maxUnavailable.String()
	}
	return "?"
}

// randomUpdateScenario builds scenario i from its own random stream; the
// family is i modulo the families, so every run of 9 covers each.
func randomUpdateScenario(seed uint64, i int) *updateScenario {
	rng := rand.New(rand.NewPCG(seed, 0x5011+uint64(i)))
	s := &updateScenario{index: i, family: updateFamilies[i%len(updateFamilies)], ns: fmt.Sprintf("rollout-%d", i),
		kind: "Deployment", name: updateName, unhealthy: -1, grace: int64(1 + rng.IntN(2)),
		milliCPU: []int64{100, 200, 300, 500}[rng.IntN(4)], replicas: 2 + rng.IntN(4)}
	s.change = []string{"restart", "image"}[rng.IntN(2)]
	nNodes := 2 + rng.IntN(2)
	for n := range nNodes {
		s.nodes = append(s.nodes, drainNodeSpec{name: fmt.Sprintf("r%d-n%d", i, n+1), milliCPU: 4000})
	}
	switch s.family {
	case "rolling", "mid-rollout", "min-ready", "never-ready":
		s.rollingBudgets(rng)
		s.minReadySeconds = map[bool]int32{true: int32(2 + rng.IntN(2))}[s.family == "min-ready"]
		s.midRollout = s.family == "mid-rollout"
		s.newNeverReady = s.family == "never-ready"
	case "recreate":
		s.recreate = true
	case "tight":
		s.rollingBudgets(rng)
		s.milliCPU = 1000
	case "quota":
		s.surge, s.unavail = ptrTo(intstr.FromInt32(1)), ptrTo(intstr.FromInt32(int32(rng.IntN(2))))
		s.quota = []string{"pods", "cpu"}[rng.IntN(2)]
	case "statefulset":
		s.statefulSet(rng)
	case "daemonset":
		s.daemonSet(rng)
	}
	s.place(rng)
	s.maybePDB(rng)
	return s
}

// rollingBudgets: integers and percentages, 0 included (never both 0).
func (s *updateScenario) rollingBudgets(rng *rand.Rand) {
	pick := func() *intstr.IntOrString {
		if rng.IntN(2) == 0 {
			return ptrTo(intstr.FromInt32(int32(rng.IntN(3))))
		}
		return ptrTo(intstr.FromString([]string{"0%", "25%", "34%", "50%"}[rng.IntN(4)]))
	}
	s.surge, s.unavail = pick(), pick()
	// The API refuses both 0 (as integers or percentages).
	if budgetNumber(s.surge) == 0 && budgetNumber(s.unavail) == 0 {
		s.unavail = ptrTo(intstr.FromInt32(1))
	}
}

func budgetNumber(v *intstr.IntOrString) int {
	if v.Type == intstr.Int {
		return v.IntValue()
	}
	var n int
	if _, err := fmt.Sscanf(v.StrVal, "%d%%", &n); err != nil {
		return -1
	}
	return n
}

func (s *updateScenario) statefulSet(rng *rand.Rand) {
	s.kind = "StatefulSet"
	s.parallel = rng.IntN(2) == 0
	if rng.IntN(3) == 0 {
		s.partition = int32(1 + rng.IntN(s.replicas-1))
	}
	if rng.IntN(2) == 0 {
		s.stsUnavail = ptrTo(intstr.FromInt32(int32(1 + rng.IntN(2))))
	}
	if rng.IntN(3) == 0 {
		s.unhealthy = rng.IntN(s.replicas)
	}
	s.newNeverReady = rng.IntN(5) == 0
}

func (s *updateScenario) daemonSet(rng *rand.Rand) {
	s.kind = "DaemonSet"
	// A third get 9-10 nodes: past 8 the controller's node map is hashed,
	// and the plugin gives each candidate the chance k/n.
	if rng.IntN(3) == 0 {
		want := 9 + rng.IntN(2)
		for n := len(s.nodes); n < want; n++ {
			s.nodes = append(s.nodes, drainNodeSpec{name: fmt.Sprintf("r%d-n%d", s.index, n+1), milliCPU: 4000})
		}
	}
	s.replicas = len(s.nodes)
	budget := func() *intstr.IntOrString {
		if rng.IntN(2) == 0 {
			return ptrTo(intstr.FromInt32(int32(1 + rng.IntN(2))))
		}
		return ptrTo(intstr.FromString([]string{"34%", "50%"}[rng.IntN(2)]))
	}
	if rng.IntN(2) == 0 {
		s.surge, s.unavail = budget(), ptrTo(intstr.FromInt32(0))
		if rng.IntN(2) == 0 {
			s.tightDSNode = s.nodes[rng.IntN(len(s.nodes))].name
		}
	} else {
		s.unavail = budget()
	}
	s.newNeverReady = rng.IntN(4) == 0
}

// place binds the initial pods; "tight" fills every node so that a surge
// pod fits nowhere; a DaemonSet's tight node leaves room for one pod only.
func (s *updateScenario) place(rng *rand.Rand) {
	if s.kind == "DaemonSet" {
		for i := range s.nodes {
			if s.nodes[i].name == s.tightDSNode {
				s.nodes[i].milliCPU = s.milliCPU + s.milliCPU/2
			}
		}
		return
	}
	if s.family == "tight" {
		s.nodes = s.nodes[:2]
		for n := range s.nodes {
			s.nodes[n].milliCPU = 0
		}
		for i := range s.replicas {
			s.placement = append(s.placement, s.nodes[i%2].name)
			s.nodes[i%2].milliCPU += s.milliCPU
		}
		return
	}
	for range s.replicas {
		s.placement = append(s.placement, s.nodes[rng.IntN(len(s.nodes))].name)
	}
}

func (s *updateScenario) maybePDB(rng *rand.Rand) {
	if rng.IntN(2) == 0 {
		return
	}
	p := &drainPDB{name: "pdb-" + s.name, selector: map[string]string{"app": s.name}}
	if s.kind == "DaemonSet" {
		// A percentage or maxUnavailable needs the owner's scale, which a
		// DaemonSet has not: the disruption controller then never syncs it.
		p.minAvailable = ptrTo(intstr.FromInt32(int32(s.replicas - 1 - rng.IntN(2))))
		s.pdb = p
		return
	}
	switch rng.IntN(4) {
	case 0:
		p.minAvailable = ptrTo(intstr.FromInt32(int32(s.replicas - rng.IntN(2))))
	case 1:
		p.minAvailable = ptrTo(intstr.FromString([]string{"50%", "80%"}[rng.IntN(2)]))
	case 2:
		p.maxUnavailable = ptrTo(intstr.FromInt32(int32(rng.IntN(2))))
	default:
		p.maxUnavailable = ptrTo(intstr.FromString("25%"))
	}
	s.pdb = p
}
