package e2e

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// outageScenario is one seeded random cluster and one failure: a node,
// several nodes, a whole zone or every zone. Its workloads, budgets and
// tear-down are the drain scenario's (drain_setup_test.go); the nodes carry
// zone labels and Leases of their own.
type outageScenario struct {
	*drainScenario
	shape     string // one node | several nodes | a zone | every zone
	nodes     []outageNode
	fail      []string
	condition string // unreachable | not-ready
}

type outageNode struct {
	name, zone string
	milliCPU   int64
	exclude    bool // labelled node.kubernetes.io/exclude-disruption
}

var outageShapes = []string{"one node", "several nodes", "a zone", "every zone"}

// outageTolerations are the tolerations a workload may carry: none (the
// API server's defaults then apply), seconds of its own, or forever.
var outageTolerations = []string{"default", "unreachable:0", "unreachable:2", "unreachable:9", "both:3", "unreachable:forever", "exists"}

func (s *outageScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "outage scenario %d (ns %s, %s, %s): zones", s.index, s.ns, s.shape, s.condition)
	zones := map[string][]string{}
	var names []string
	for _, n := range s.nodes {
		if _, ok := zones[n.zone]; !ok {
			names = append(names, n.zone)
		}
		d := fmt.Sprintf("%s(%dm", n.name, n.milliCPU)
		if n.exclude {
			d += ",excluded"
		}
		zones[n.zone] = append(zones[n.zone], d+")")
	}
	for _, z := range names {
		if len(zones[z]) > 8 {
			fmt.Fprintf(&b, " %s:[%d nodes: %s ...]", z, len(zones[z]), strings.Join(zones[z][:3], " "))
		} else {
			fmt.Fprintf(&b, " %s:%v", z, zones[z])
		}
	}
	// The drain's description after its node list and before its drain.
	d := s.drainScenario.String()
	if i := strings.Index(d, ";"); i >= 0 {
		d = d[i:]
	}
	if i := strings.LastIndex(d, "; drain"); i >= 0 {
		d = d[:i]
	}
	for _, w := range s.workloads {
		if len(w.tolerations) > 0 {
			d = strings.Replace(d, w.kind+" "+w.name+" ", fmt.Sprintf("%s %s tol=%s ", w.kind, w.name, outageTolString(w.tolerations)), 1)
		}
	}
	fmt.Fprintf(&b, "%s; fail %d: %v", d, len(s.fail), s.fail)
	return b.String()
}

func outageTolString(ts []corev1.Toleration) string {
	var parts []string
	for _, t := range ts {
		p := t.Key
		if t.Operator == corev1.TolerationOpExists && t.Key == "" {
			p = "*"
		}
		if t.TolerationSeconds != nil {
			p += fmt.Sprintf(":%ds", *t.TolerationSeconds)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ",")
}

// randomOutageScenario builds scenario i from its own random stream. Every
// fourth is of each shape, so that a short list covers them all.
func randomOutageScenario(seed uint64, i int) *outageScenario {
	rng := rand.New(rand.NewPCG(seed, 0x0a7a+uint64(i)))
	s := &outageScenario{drainScenario: &drainScenario{index: i, ns: fmt.Sprintf("outage-%d", i)},
		shape: outageShapes[i%len(outageShapes)], condition: "unreachable"}
	if rng.IntN(6) == 0 {
		s.condition = "not-ready"
	}
	s.addNodes(rng)
	s.pickFailure(rng)
	s.addWorkloads(rng)
	s.addPDBs(rng)
	for _, n := range s.nodes {
		s.drainScenario.nodes = append(s.drainScenario.nodes, drainNodeSpec{name: n.name, milliCPU: n.milliCPU})
	}
	return s
}

// addNodes makes one to three zones of one to six nodes; one zone in six
// (never with "every zone") has more than 50 tiny nodes, beyond
// --large-cluster-size-threshold.
func (s *outageScenario) addNodes(rng *rand.Rand) {
	nz := 1 + rng.IntN(3)
	if s.shape == "a zone" && nz == 1 {
		nz = 2
	}
	large := s.shape != "every zone" && rng.IntN(6) == 0
	for z := range nz {
		zone := fmt.Sprintf("o%d-%c", s.index, 'a'+z)
		size, cpu := 1+rng.IntN(6), int64(0)
		if large && z == 0 {
			size, cpu = 51+rng.IntN(4), 500
		}
		for n := range size {
			c := cpu
			if c == 0 {
				c = int64(2000 + 1000*rng.IntN(3))
			}
			s.nodes = append(s.nodes, outageNode{name: fmt.Sprintf("o%d-%c%d", s.index, 'a'+z, n+1), zone: zone, milliCPU: c})
		}
	}
	if rng.IntN(3) == 0 {
		s.nodes[rng.IntN(len(s.nodes))].exclude = true
	}
}

func (s *outageScenario) zoneNodes(zone string) []string {
	var out []string
	for _, n := range s.nodes {
		if n.zone == zone {
			out = append(out, n.name)
		}
	}
	return out
}

// pickFailure chooses the failed nodes. "several nodes" takes two or more
// nodes of one zone, often just above or below --unhealthy-zone-threshold
// (55%), or a few across zones.
func (s *outageScenario) pickFailure(rng *rand.Rand) {
	zone := s.nodes[rng.IntN(len(s.nodes))].zone
	in := s.zoneNodes(zone)
	switch s.shape {
	case "one node":
		s.fail = []string{in[rng.IntN(len(in))]}
	case "a zone":
		s.fail = in
	case "every zone":
		for _, n := range s.nodes {
			s.fail = append(s.fail, n.name)
		}
	default:
		k := 2
		if len(in) >= 3 {
			// ceil(0.55 n) is the first count at or above the threshold.
			at := (len(in)*55 + 99) / 100
			k = min(len(in)-1, max(2, at-1+rng.IntN(2)))
			s.fail = slices.Clone(in[:k])
		} else {
			for _, j := range rng.Perm(len(s.nodes))[:min(len(s.nodes), k)] {
				s.fail = append(s.fail, s.nodes[j].name)
			}
		}
	}
}

// addWorkloads places two to five workloads, most of their pods on nodes
// that fail, on the small zones' nodes (a large zone's nodes only get a
// few 100m pods), with random tolerations; one in three scenarios has a
// pod as large as the largest node, whose replacement likely fits nowhere.
func (s *outageScenario) addWorkloads(rng *rand.Rand) {
	free := map[string]int64{}
	var small []string
	for _, n := range s.nodes {
		free[n.name] = n.milliCPU - 200 // room for a DaemonSet pod
		if n.milliCPU > 500 {
			small = append(small, n.name)
		}
	}
	failed := map[string]bool{}
	for _, n := range s.fail {
		failed[n] = true
		if !slices.Contains(small, n) {
			small = append(small, n) // a large zone's failed node takes small pods
		}
	}
	kinds := []string{"Deployment", "StatefulSet", "Job", "Pod", "Deployment"}
	if len(s.nodes) <= 12 {
		kinds = append(kinds, "DaemonSet")
	}
	nw := 2 + rng.IntN(4)
	for i := range nw {
		kind := kinds[rng.IntN(len(kinds))]
		w := &drainWorkload{kind: kind, name: fmt.Sprintf("%s%d", strings.ToLower(kind[:3]), i), tier: "a",
			grace: int64(1 + rng.IntN(3)), parallel: true, milliCPU: []int64{100, 200, 500, 800}[rng.IntN(4)]}
		w.tolerations = outageToleration(outageTolerations[rng.IntN(len(outageTolerations))])
		switch kind {
		case "DaemonSet":
			w.milliCPU = 100
		case "Pod":
			w.replicas = 1
		default:
			w.replicas = 1 + rng.IntN(4)
		}
		if s.place(rng, w, free, failed, small) {
			s.workloads = append(s.workloads, w)
		}
	}
	if rng.IntN(3) == 0 && len(small) > 0 {
		s.addBig(rng, free, failed)
	}
}

// place binds each pod to a node with room, a failed one two times in
// three; false when no pod fits anywhere.
func (s *outageScenario) place(rng *rand.Rand, w *drainWorkload, free map[string]int64, failed map[string]bool, nodes []string) bool {
	if w.kind == "DaemonSet" {
		return true
	}
	if len(nodes) == 0 {
		for n := range free {
			nodes = append(nodes, n)
		}
		slices.Sort(nodes)
		w.milliCPU = 100
	}
	for range w.replicas {
		var fit, fitFailed []string
		for _, n := range nodes {
			if free[n] >= w.milliCPU {
				fit = append(fit, n)
				if failed[n] {
					fitFailed = append(fitFailed, n)
				}
			}
		}
		if len(fit) == 0 {
			break
		}
		pick := fit[rng.IntN(len(fit))]
		if len(fitFailed) > 0 && rng.IntN(3) > 0 {
			pick = fitFailed[rng.IntN(len(fitFailed))]
		}
		free[pick] -= w.milliCPU
		w.placement = append(w.placement, pick)
	}
	w.replicas = len(w.placement)
	return w.replicas > 0
}

// addBig adds a one-replica Deployment as large as the largest node's free
// room, on a failed node when it fits there.
func (s *outageScenario) addBig(rng *rand.Rand, free map[string]int64, failed map[string]bool) {
	var best string
	for _, n := range s.fail {
		if best == "" || free[n] > free[best] {
			best = n
		}
	}
	if best == "" || free[best] < 600 {
		return
	}
	w := &drainWorkload{kind: "Deployment", name: "big", tier: "b", grace: 1, replicas: 1, milliCPU: free[best],
		placement: []string{best}, tolerations: outageToleration("unreachable:2")}
	free[best] = 0
	_ = rng
	s.workloads = append(s.workloads, w)
}

func outageToleration(kind string) []corev1.Toleration {
	secs := func(v int64) *int64 { return &v }
	exists := func(key string, s *int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: s}
	}
	switch kind {
	case "unreachable:0":
		return []corev1.Toleration{exists(corev1.TaintNodeUnreachable, secs(0))}
	case "unreachable:2":
		return []corev1.Toleration{exists(corev1.TaintNodeUnreachable, secs(2))}
	case "unreachable:9":
		return []corev1.Toleration{exists(corev1.TaintNodeUnreachable, secs(9))}
	case "both:3":
		return []corev1.Toleration{exists(corev1.TaintNodeUnreachable, secs(3)), exists(corev1.TaintNodeNotReady, secs(3))}
	case "unreachable:forever":
		return []corev1.Toleration{exists(corev1.TaintNodeUnreachable, nil)}
	case "exists":
		return []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	}
	return nil
}

// addPDBs gives half the Deployments and StatefulSets a budget.
func (s *outageScenario) addPDBs(rng *rand.Rand) {
	for _, w := range s.workloads {
		if (w.kind != "Deployment" && w.kind != "StatefulSet") || rng.IntN(2) == 0 {
			continue
		}
		p := drainPDB{name: "pdb-" + w.name, selector: map[string]string{"app": w.name}}
		if rng.IntN(2) == 0 {
			p.minAvailable = ptrTo(intstr.FromInt32(int32(max(1, w.replicas-1))))
		} else {
			p.maxUnavailable = ptrTo(intstr.FromInt32(1))
		}
		s.pdbs = append(s.pdbs, p)
	}
}

// maxTolerationSeconds is the longest finite toleration any pod may carry
// (the API server's default included).
func (s *outageScenario) maxTolerationSeconds(def int64) int64 {
	m := def
	for _, w := range s.workloads {
		for _, t := range w.tolerations {
			if t.TolerationSeconds != nil {
				m = max(m, *t.TolerationSeconds)
			}
		}
	}
	return m
}
