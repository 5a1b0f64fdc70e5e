package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const day = 24 * time.Hour

// namedScenarios are hand-built cases. Pod indexes refer to the initial
// pods sorted by name (StatefulSets: by ordinal); because names are random,
// the expectations only rely on the states, never on names. Buckets are the
// log2 ready-age buckets of ActivePodsWithRanks.Less.
func namedScenarios() []*scenario {
	return []*scenario{
		{
			// ActivePodsWithRanks.Less R5 then R6: the crowded node first, then the most
			// recently ready (30d: bucket 51; 90d: 52; 150d: 53).
			name: "deployment-5to3-two-nodes", kind: kindDeployment, replicas: 5, target: 3,
			states: []podState{
				running("node-a", 150*day), running("node-b", 120*day), running("node-a", 90*day),
				running("node-b", 60*day), running("node-a", 30*day),
			},
			expect: expectDeletedIdx(2, 4),
		},
		{
			// Two ReplicaSets: the template changes while the new pods are
			// not ready, then the Deployment is scaled in. Both the
			// proportional scale() step and the follow-up rolling-update
			// syncs delete pods (scale() and rolling.go).
			name: "deployment-mid-rollout", kind: kindDeployment, replicas: 6, target: 3,
			maxSurge: ptrTo(intstr.FromInt32(2)), maxUnavailable: ptrTo(intstr.FromInt32(1)),
			states: []podState{
				running("node-a", 100*day), running("node-a", 20*day), running("node-b", 3*day),
				running("node-b", 9*time.Hour), running("node-c", 40*day), running("node-a", 2*time.Hour),
			},
			rollout:     true,
			extraStates: []podState{notReady("node-a"), pending("")},
			expect:      expectSomethingDeleted,
		},
		{
			// A standalone ReplicaSet has no related pods: all ranks are 0,
			// so the crowded node does not matter and R6 alone decides.
			name: "replicaset-standalone-ranks-zero", kind: kindRS, replicas: 5, target: 3,
			states: []podState{
				running("node-a", 200*day), running("node-a", 150*day), running("node-a", 100*day),
				running("node-a", 45*day), running("node-b", 2*time.Hour),
			},
			expect: expectDeletedIdx(3, 4),
		},
		{
			// ReplicationController: not ready first (R3), then the most
			// recently ready; restarts of a ready pod never matter here.
			name: "replicationcontroller-4to2", kind: kindRC, replicas: 4, target: 2,
			states: []podState{
				running("node-a", 10*day).withRestarts(4), running("node-b", 20*day),
				notReady("node-a").withRestarts(1), running("node-b", 3*time.Hour),
			},
			expect: expectDeletedIdx(2, 3),
		},
		{
			// Every rule in one set (Deployment, 8 -> 3): unbound (R1),
			// Pending (R2), not ready (R3), lowest cost (R4), then the
			// crowded node-a (R5) and the most recently ready there (R6).
			name: "mixed-states-8to3", kind: kindDeployment, replicas: 8, target: 3,
			states: []podState{
				pending(""),
				pending("node-a"),
				notReady("node-a").withRestarts(3),
				running("node-b", 10*time.Minute).withCost("-5"),
				running("node-a", 2*day),
				running("node-b", 90*day).withRestarts(7).withCost("100"),
				running("node-a", 5*time.Hour),
				running("node-c", 40*day),
			},
			expect: expectDeletedIdx(0, 1, 2, 3, 6),
		},
		{
			// Four pods on node-a: rank beats ready time. The 60d pod
			// (bucket 52) goes first; 120d and 130d share bucket 53, so the
			// lower UID decides between them (the oracle checks which).
			name: "several-pods-on-one-node", kind: kindDeployment, replicas: 6, target: 4,
			states: []podState{
				running("node-a", 60*day), running("node-a", 120*day), running("node-a", 130*day),
				running("node-a", 250*day), running("node-b", 20*time.Minute), running("node-c", 50*time.Minute),
			},
			expect: func(r *scenarioRun) error {
				got := r.deletedIdx()
				if len(got) != 2 || got[0] != 0 || (got[1] != 1 && got[1] != 2) {
					return fmt.Errorf("deleted indexes %v, want 0 and one of 1,2", got)
				}
				return nil
			},
		},
		{
			// A matching orphan is adopted by the ReplicaSet; being the most
			// recently ready pod it is the first victim.
			name: "orphan-adopted", kind: kindRS, replicas: 4, target: 2,
			orphan: ptrTo(running("node-b", 3*time.Minute)),
			states: []podState{running("node-a", 10*day), running("node-a", 20*day), running("node-b", 40*day)},
			expect: func(r *scenarioRun) error {
				o := r.beforeByN[r.orphan]
				if o == nil || metav1.GetControllerOf(o) == nil {
					return fmt.Errorf("orphan %s was not adopted before the scale", r.orphan)
				}
				want := []string{r.initial[0], r.orphan}
				slices.Sort(want)
				got := slices.Clone(r.deleted)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					return fmt.Errorf("deleted %v, want %v", r.deleted, want)
				}
				return nil
			},
		},
		{
			// One pod is deleted first and stays Terminating (bound). It is
			// not a candidate; its unbound replacement dies first (R1), then
			// the most recently ready (20d) of the equal-rank rest.
			name: "terminating-pod", kind: kindDeployment, replicas: 5, target: 3,
			states: []podState{
				running("node-a", 10*day), running("node-a", 20*day), running("node-b", 30*day),
				running("node-a", 40*day), running("node-b", 50*day),
			},
			terminate: []int{0},
			expect: func(r *scenarioRun) error {
				if len(r.deleted) != 2 || !slices.Contains(r.deleted, r.initial[1]) || slices.Contains(r.deleted, r.initial[0]) {
					return fmt.Errorf("deleted %v, want %s and the replacement pod", r.deleted, r.initial[1])
				}
				for _, n := range r.deleted {
					if n != r.initial[1] && slices.Contains(r.initial, n) {
						return fmt.Errorf("deleted %v, want %s and the replacement pod", r.deleted, r.initial[1])
					}
				}
				return nil
			},
		},
		{
			// Restarts decide between not-ready pods; from 1.32 the sidecar
			// (restartPolicy Always init container) restarts break the tie
			// of the regular containers.
			name: "replicaset-sidecar-restarts", kind: kindRS, replicas: 4, target: 2, sidecar: true,
			states: []podState{
				notReady("node-a").withSidecar(5), notReady("node-a").withSidecar(3),
				notReady("node-a"), notReady("node-a").withSidecar(1),
			},
			expect: expectDeletedIdx(0, 1),
		},
		{
			// Pods created at different moments (8 s apart), all not ready
			// with equal restarts: creation time (R8, log2 buckets of ages
			// of seconds) decides. stableUntil is always close here, so the
			// runner only re-predicts when it is under 3 s away; waiting for
			// 30 s of stability would put both ages in one bucket, where
			// UIDs and same-second ties decide instead.
			name: "deployment-created-at-different-times", kind: kindDeployment, replicas: 4, target: 2,
			growFrom: 2, growDelay: 8 * time.Second, stableMargin: 3 * time.Second,
			states: []podState{notReady("node-a"), notReady("node-a"), notReady("node-a"), notReady("node-a")},
			expect: func(r *scenarioRun) error {
				if !r.oracle.certain() {
					return nil // both ages fell into one bucket: UIDs decide
				}
				newest := r.before[0].CreationTimestamp
				for _, p := range r.before {
					if newest.Before(&p.CreationTimestamp) {
						newest = p.CreationTimestamp
					}
				}
				for _, n := range r.deleted {
					if p := r.beforeByN[n]; p == nil || !p.CreationTimestamp.Equal(&newest) {
						return fmt.Errorf("deleted %v: want the two pods created last (%s)", r.deleted, newest.UTC())
					}
				}
				return nil
			},
		},
		{
			// OrderedReady: one pod at a time, highest ordinal first; the
			// runner force-deletes each Terminating pod so the next goes.
			name: "statefulset-orderedready-5to2", kind: kindSTS, replicas: 5, target: 2,
			states: []podState{
				running("node-a", 30*day), running("node-b", 20*day), running("node-a", 10*day),
				running("node-b", 5*day), running("node-a", day),
			},
			expect: expectDeletedOrder("web-4", "web-3", "web-2"),
		},
		{
			// Parallel: every condemned pod at once, even with a kept pod
			// not ready.
			name: "statefulset-parallel-5to2", kind: kindSTS, replicas: 5, target: 2, parallel: true,
			states: []podState{
				running("node-a", 30*day), notReady("node-b"), running("node-a", 10*day),
				pending("node-b"), running("node-a", day),
			},
			expect: expectDeletedSet("web-2", "web-3", "web-4"),
		},
		{
			// spec.ordinals.start = 3: pods web-3..web-7, 5 -> 2 keeps 3 and 4.
			name: "statefulset-start-ordinal-3", kind: kindSTS, replicas: 5, target: 2, startOrdinal: ptrTo(int32(3)),
			states: []podState{
				running("node-a", 30*day), running("node-b", 20*day), running("node-a", 10*day),
				running("node-b", 5*day), running("node-a", day),
			},
			expect: expectDeletedOrder("web-7", "web-6", "web-5"),
		},
		{
			// OrderedReady stall: a kept pod (web-1) is not ready, so the
			// controller deletes nothing at all.
			name: "statefulset-orderedready-stall", kind: kindSTS, replicas: 5, target: 2,
			states: []podState{
				running("node-a", 30*day), notReady("node-b"), running("node-a", 10*day),
				running("node-b", 5*day), running("node-a", day),
			},
			quiet:  6 * time.Second,
			expect: expectDeletedOrder(),
		},
	}
}

// shortScenarios run with -short.
var shortScenarios = []string{
	"deployment-5to3-two-nodes", "replicaset-standalone-ranks-zero", "terminating-pod",
	"statefulset-orderedready-5to2", "statefulset-orderedready-stall",
}

func expectSomethingDeleted(r *scenarioRun) error {
	if len(r.deleted) == 0 {
		return fmt.Errorf("nothing was deleted")
	}
	return nil
}

func TestNamedScenarios(t *testing.T) {
	for _, sc := range namedScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			if testing.Short() && !slices.Contains(shortScenarios, sc.name) {
				t.Skip("not in the -short set")
			}
			r := newRun(sc)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			_ = r.prepare(ctx) // errors are reported by run
			r.run(t)
		})
	}
}
