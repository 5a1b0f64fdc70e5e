package workload

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// fleet is a random mid-rollout Deployment and the scale to predict.
type fleet struct {
	name   string
	snap   *snapshot.Snapshot
	target int32
	minor  int
}

var fleetStrategies = [][2]string{{"25%", "25%"}, {"1", "0"}, {"2", "1"}, {"0", "1"}, {"3", "2"}, {"50%", "0%"}}

// randomFleet: a Deployment of 2-40 replicas (now and then up to 300)
// over 1-4 ReplicaSets, with pending, unready, restarted and costed pods,
// exact ties, rank races on few nodes, terminating, foreign and orphan
// pods, an orphan ReplicaSet, a paused Deployment, and every rule version.
func randomFleet(rng *rand.Rand, i int) fleet {
	n := int32(2 + rng.IntN(39))
	if rng.IntN(10) == 0 {
		n = int32(50 + rng.IntN(251))
	}
	nodes := 1 + rng.IntN(6)
	race := rng.IntN(4) == 0
	if race {
		nodes = 2
	}
	strat := fleetStrategies[rng.IntN(len(fleetStrategies))]
	nRS := 1 + rng.IntN(4)
	d := mkDeploy(n, n, strat[0], strat[1])
	d.Spec.Template = template(fmt.Sprintf("web:%d", nRS), "")
	d.Spec.Paused = rng.IntN(12) == 0
	if rng.IntN(8) == 0 {
		d.Spec.MinReadySeconds = int32(rng.IntN(600))
	}
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}}
	left := n + int32(rng.IntN(3))
	var all []*corev1.Pod
	for r := 0; r < nRS; r++ {
		size := left
		if r < nRS-1 {
			size = int32(rng.IntN(int(left) + 1))
		}
		left -= size
		hash := fmt.Sprintf("h%d", r)
		rs := mkDepRS(d, hash, fmt.Sprintf("web:%d", r+1), size, time.Duration(100*(nRS-r))*24*time.Hour, n, n+int32(rng.IntN(3)))
		if rng.IntN(6) == 0 {
			rs.Annotations = nil
		}
		rs.Status.Replicas = size + int32(rng.IntN(2))
		if r == 0 && nRS > 1 && rng.IntN(10) == 0 {
			rs.OwnerReferences = nil // an orphan the Deployment adopts
		}
		s.ReplicaSets = append(s.ReplicaSets, rs)
		for j := int32(0); j < size; j++ {
			var p *corev1.Pod
			if len(all) > 0 && rng.IntN(5) == 0 {
				p = all[rng.IntN(len(all))].DeepCopy() // an exact tie
			} else {
				p = randomFleetPod(rng, nodes, race, r == nRS-1 && nRS > 1)
			}
			name := fmt.Sprintf("%s-%c%d", rs.Name, 'a'+rng.IntN(26), j)
			p.Name, p.UID, p.Namespace = name, types.UID("uid-"+name), testNS
			p.Labels = rs.Spec.Template.Labels
			p.OwnerReferences = []metav1.OwnerReference{ctrlRef("ReplicaSet", rs.Name, string(rs.UID))}
			all = append(all, p)
		}
	}
	if len(all) > 0 && rng.IntN(5) == 0 {
		t := all[rng.IntN(len(all))].DeepCopy()
		t.Name, t.UID = "zz-terminating", "uid-zz-terminating"
		t.DeletionTimestamp = &metav1.Time{Time: testNow.Add(-10 * time.Second)}
		all = append(all, t)
	}
	if len(all) > 0 && rng.IntN(7) == 0 {
		f := all[rng.IntN(len(all))].DeepCopy()
		f.Name, f.UID = "zz-foreign", "uid-zz-foreign"
		f.OwnerReferences = []metav1.OwnerReference{ctrlRef("ReplicaSet", "other", "uid-other")}
		all = append(all, f)
	}
	if rng.IntN(5) == 0 {
		o := randomFleetPod(rng, nodes, false, false)
		o.Name, o.UID, o.Namespace, o.Labels = "zz-orphan", "uid-zz-orphan", testNS, map[string]string{"app": "web"}
		all = append(all, o)
	}
	s.Pods = all
	f := fleet{snap: s, target: int32(rng.IntN(int(n) + 1)), minor: rules.Oldest + rng.IntN(rules.Newest-rules.Oldest+1)}
	if rng.IntN(10) == 0 {
		f.target = n + int32(1+rng.IntN(5))
	}
	if rng.IntN(2) == 0 {
		f.minor = rules.Newest
	}
	f.name = fmt.Sprintf("%04d-%drs-%dto%d-surge%s-unavail%s-1.%d", i, nRS, n, f.target, strat[0], strat[1], f.minor)
	return f
}

func randomFleetPod(rng *rand.Rand, nodes int, race, fresh bool) *corev1.Pod {
	age := func() time.Duration {
		return []time.Duration{5 * time.Minute, time.Hour, 24 * time.Hour, 30 * 24 * time.Hour}[rng.IntN(4)] + time.Duration(rng.IntN(3600))*time.Second
	}
	b := mkPod("x")
	if race {
		return b.on(fmt.Sprintf("node-%d", rng.IntN(2))).readyFor([]time.Duration{72 * time.Hour, 960 * time.Hour}[rng.IntN(2)] + time.Duration(rng.IntN(3600))*time.Second).pod()
	}
	if rng.IntN(8) == 0 {
		return b.phase(corev1.PodPending).createdAgo(age()).pod()
	}
	b = b.on(fmt.Sprintf("node-%d", rng.IntN(nodes)))
	ready := 75
	if fresh {
		ready = 15
	}
	if rng.IntN(100) < ready {
		b = b.readyFor(age())
	} else {
		b = b.notReady().createdAgo(age())
	}
	if rng.IntN(4) == 0 {
		b = b.restarts(int32(1 + rng.IntN(5)))
	}
	if rng.IntN(7) == 0 {
		b.p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": strconv.Itoa(rng.IntN(11) - 5)}
	}
	return b.pod()
}

// TestDeploymentMemoChangesNothing: sharing runs between the simulations
// (runMemo) gives the same interleavings, with their full predictions, and
// the same merged prediction, field for field, as computing each run
// afresh, over random mid-rollout fleets.
func TestDeploymentMemoChangesNothing(t *testing.T) {
	t.Parallel()
	n := 60
	if testing.Short() {
		n = 8
	}
	seeds := []int{498} // a shared run's tie is realized differently per interleaving
	for i := 0; i < n; i++ {
		seeds = append(seeds, i)
	}
	ref := snapshot.Ref{Kind: snapshot.Deployment, Namespace: testNS, Name: "web"}
	for _, i := range seeds {
		f := randomFleet(rand.New(rand.NewPCG(uint64(i), 13)), i)
		o := Options{Rules: ruleSetFor(t, f.minor), Now: testNow}
		slow := o
		slow.reference = true
		bs, ex, err := exploreDeployment(f.snap, ref, f.target, o)
		wantBs, wantEx, errWant := exploreDeployment(f.snap, ref, f.target, slow)
		if fmt.Sprint(err) != fmt.Sprint(errWant) || ex != wantEx || !reflect.DeepEqual(withoutTiming(bs), withoutTiming(wantBs)) {
			t.Fatalf("%s: the interleavings differ from the reference path (%v, %v; want %v, %v)", f.name, ex, err, wantEx, errWant)
		}
		if err != nil {
			continue
		}
		for k := range bs {
			// The weights under other timings, compared at the ends.
			for _, end := range [][nRaces]float64{timingEnd(0), timingEnd(1)} {
				tm := timing(end)
				if a, b := bs[k].weightAt(&tm), wantBs[k].weightAt(&tm); a != b {
					t.Fatalf("%s: branch %d weighs %v at an end, %v on the reference path", f.name, k, a, b)
				}
			}
		}
		got, want := weighBranches(bs, ex), weighBranches(wantBs, wantEx)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the prediction differs from the reference path:\n%s\nwant\n%s", f.name, mustJSON(t, got), mustJSON(t, want))
		}
	}
}

// withoutTiming: the branches without their weight functions (functions
// never compare equal).
func withoutTiming(bs []branch) []branch {
	out := slices.Clone(bs)
	for k := range out {
		out[k].at = nil
	}
	return out
}

// timingEnd is every race at its low (0) or high (1) end.
func timingEnd(e int) [nRaces]float64 {
	var t [nRaces]float64
	for r := range t {
		t[r] = timingRange[r][e]
	}
	return t
}
