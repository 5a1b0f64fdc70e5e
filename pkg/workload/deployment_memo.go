package workload

import (
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/deployment"
)

// runMemo shares work between the simulations of one exploration. The
// interleavings replay the same steps up to where they differ, and a
// ReplicaSet run is a function of its inputs alone (the engine is seeded),
// so each distinct run is computed once. Claims are per snapshot.
type runMemo struct {
	// ids numbers the snapshot's pod names, for the key of a gone set.
	ids    map[string]int
	runs   map[string]rsRun
	stable map[string]stable
	claims map[string]claimed
	// initial: the controller's view before the scale.
	initial []deployment.ReplicaSet
	// nodes: each pod's node (sim.nodeOf).
	nodes map[string]string
}

// stable is a run's stableUntil search.
type stable struct {
	until      *time.Time
	lowerBound bool
}

func newRunMemo(pods []*corev1.Pod) *runMemo {
	m := &runMemo{ids: make(map[string]int, len(pods)), runs: map[string]rsRun{}, stable: map[string]stable{}, claims: map[string]claimed{}}
	for _, p := range pods {
		if _, ok := m.ids[p.Name]; !ok {
			m.ids[p.Name] = len(m.ids)
		}
	}
	return m
}

// claim is sim.claim for r, once per ReplicaSet name: a ReplicaSet the
// rollout creates has the same name, UID and selector in every simulation.
func (m *runMemo) claim(sim *depSim, r *depRS) claimed {
	c, ok := m.claims[r.rs.Name]
	if !ok {
		c = claim(sim.work.Pods, sim.d.Namespace, string(r.rs.UID), r.like.selector)
		m.claims[r.rs.Name] = c
	}
	// Clipped: shrinkOne appends created pods to its own copy.
	c.active = slices.Clip(c.active)
	return c
}

// run is runReplicaSet for r with the candidates c (its claim and the
// first created pods, so their count says which), computed once for the
// same inputs. Runs are shared, read only: realizeOpen changes a copy of
// the pods and victims, and each caller gets its own groups, whose pod
// lists the merging of groups appends to.
func (m *runMemo) run(sim *depSim, r *depRS, c claimed, replicas int32, gone map[string]bool) rsRun {
	x := m.shared(sim, r, c, replicas, gone)
	x.contenders = slices.Clone(x.contenders)
	for i := range x.contenders {
		x.contenders[i].Pods = slices.Clone(x.contenders[i].Pods)
	}
	return x
}

// shared is run without the copy, for callers that only read it.
func (m *runMemo) shared(sim *depSim, r *depRS, c claimed, replicas int32, gone map[string]bool) rsRun {
	k := m.key(sim, r, len(c.active), replicas, gone)
	x, ok := m.runs[k]
	if !ok {
		fast := sim.o
		fast.branchOnly = true
		x = runReplicaSet(&sim.work, r.like, c, replicas, fast, gone)
		m.runs[k] = x
	}
	if !sim.o.branchOnly {
		// The full run of the most likely interleaving: the same run and
		// its stableUntil.
		st, ok := m.stable[k]
		if !ok {
			st.until, st.lowerBound = stableUntil(&sim.work, r.like, c, replicas, sim.o, gone)
			m.stable[k] = st
		}
		x.stableUntil, x.stableLowerBound = st.until, st.lowerBound
	}
	return x
}

// key names every input of a run that differs between simulations: the
// ReplicaSet, its count of candidates, the target, the ReplicaSets (the
// rollout may have created one) and the pods gone. The rest (snapshot,
// rules, time, seed) is fixed.
func (m *runMemo) key(sim *depSim, r *depRS, candidates int, replicas int32, gone map[string]bool) string {
	b := []byte(r.rs.Name)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(candidates), 10)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(replicas), 10)
	for _, rs := range sim.work.ReplicaSets {
		b = append(b, 0)
		b = append(b, rs.Name...)
	}
	b = append(b, 0xff)
	bits := make([]byte, (len(m.ids)+7)/8)
	var others []string
	for n, g := range gone {
		if !g {
			continue
		}
		if i, ok := m.ids[n]; ok {
			bits[i/8] |= 1 << (i % 8)
		} else {
			others = append(others, n) // created pods
		}
	}
	b = append(b, bits...)
	slices.Sort(others)
	for _, n := range others {
		b = append(b, 0)
		b = append(b, n...)
	}
	return string(b)
}
