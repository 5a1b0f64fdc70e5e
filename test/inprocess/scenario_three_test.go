package inprocess

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// threeShrinkEvery: after every such scenario of the main stream, the
// long run also draws one of three ReplicaSets that all shrink at once
// (the class of rollout-three-rs-rank and -timing), from a stream of its
// own, so that the main stream's scenarios stay as they were.
const threeShrinkEvery = 4

// threeShrinkStrategies allow no unavailability.
var threeShrinkStrategies = [][2]intstr.IntOrString{
	{intstr.FromInt32(1), intstr.FromInt32(0)},
	{intstr.FromInt32(2), intstr.FromInt32(0)},
	{intstr.FromString("25%"), intstr.FromInt32(0)},
	{intstr.FromString("50%"), intstr.FromInt32(0)},
}

// fullSurge: the replicas n whose surge the sizes use up exactly (or
// nearly, for a percentage), and that surge.
func fullSurge(v intstr.IntOrString, sizes []int32) (int32, int32) {
	total := sizes[0] + sizes[1] + sizes[2]
	n := total
	for n > 3 && n+surgeOf(v, n) > total {
		n--
	}
	return n, surgeOf(v, n)
}

func surgeOf(v intstr.IntOrString, n int32) int32 {
	s, _ := intstr.GetScaledValueFromIntOrPercent(&v, int(n), true)
	return int32(s)
}

// threeShrinkRand is the class's own random stream for main scenario i.
func threeShrinkRand(seed uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x3e5000+uint64(i)))
}

// threeShrinkScenario: a Deployment mid-rollout over three ReplicaSets of
// 2-5 pods each, on 2-3 nodes, mostly ready (so statuses go stale and
// co-location ranks), scaled in to at most a third of its size so that
// the proportional split shrinks all three in one sync.
func threeShrinkScenario(rng *rand.Rand, i int, now time.Time) *scenario {
	// No unavailability allowed and every surge pod in use, so that the
	// rollout is stuck until the scale (the controllers settle on this
	// shape before it, as the reported cases were).
	strat := threeShrinkStrategies[rng.IntN(len(threeShrinkStrategies))]
	sizes := []int32{int32(2 + rng.IntN(4)), int32(2 + rng.IntN(4)), int32(2 + rng.IntN(4))}
	n, surge := fullSurge(strat[0], sizes)
	if sizes[2] < surge {
		sizes[2] = surge // the new one holds the unready surge
		n, surge = fullSurge(strat[0], sizes)
	}
	nodes := 2 + rng.IntN(2)
	orphanOf := -1
	if rng.IntN(100) < 25 {
		orphanOf = rng.IntN(2) // an old one's pod is an orphan carrying its hash
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: depName, Namespace: ns, UID: "uid-web", CreationTimestamp: metav1.NewTime(now.Add(-300 * day))},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": depName}},
			Template: template("h2"), ProgressDeadlineSeconds: ptrTo(int32(600)), RevisionHistoryLimit: ptrTo(int32(10)),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &strat[0], MaxUnavailable: &strat[1]}}},
	}
	delete(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	sc := &scenario{objs: []runtime.Object{d}}
	var allPods []*corev1.Pod
	var tags []string
	for r := range 3 {
		rs, pods := threeShrinkReplicaSet(rng, r, sizes[r], n, surge, nodes, now)
		if r == orphanOf {
			// Adopted in the controller's next sync, and counted on its
			// node by every sibling before and after.
			pods[len(pods)-1].OwnerReferences = nil
			tags = append(tags, "orphan")
		}
		sc.objs = append(sc.objs, rs)
		allPods = append(allPods, pods...)
	}
	for _, p := range allPods {
		sc.objs = append(sc.objs, p)
	}
	sc.target = int32(1 + rng.IntN(int(max(1, n/3))))
	sc.name = fmt.Sprintf("%04d-3shrink-%dto%d-surge%s-unavail%s", i, n, sc.target, strat[0].String(), strat[1].String())
	for _, t := range tags {
		sc.name += "-" + t
	}
	return sc
}

// threeShrinkReplicaSet is ReplicaSet r (h2 is the new one) and its pods:
// ready in 80% (the new one's in 50%), ready times in a few buckets.
func threeShrinkReplicaSet(rng *rand.Rand, r int, size, n, maxSurge int32, nodes int, now time.Time) (*appsv1.ReplicaSet, []*corev1.Pod) {
	hash := fmt.Sprintf("h%d", r)
	name := depName + "-" + hash
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), Labels: template(hash).Labels,
			CreationTimestamp: metav1.NewTime(now.Add(-time.Duration(10*(3-r)) * day)),
			OwnerReferences:   []metav1.OwnerReference{ctrlRef("Deployment", depName, "uid-web")},
			Annotations: map[string]string{"deployment.kubernetes.io/revision": strconv.Itoa(r + 1),
				"deployment.kubernetes.io/desired-replicas": strconv.Itoa(int(n)),
				"deployment.kubernetes.io/max-replicas":     strconv.Itoa(int(n + maxSurge))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptrTo(size), Selector: &metav1.LabelSelector{MatchLabels: template(hash).Labels}, Template: template(hash)},
	}
	ready := map[bool]int{false: 80, true: 50}[r == 2]
	var pods []*corev1.Pod
	for j := range size {
		st := randomPodStateReady(rng, nodes, ready)
		if r == 2 && j < maxSurge {
			st = randomPodStateReady(rng, nodes, 0) // the surge, not ready yet
		}
		if st.ready && rng.IntN(2) == 0 {
			st.readyAgo = []time.Duration{40 * time.Second, 20 * time.Minute, 3 * day}[rng.IntN(3)] + time.Duration(rng.IntN(20))*time.Second
			st.created = st.readyAgo + time.Minute
		}
		p := st.pod(fmt.Sprintf("%s-%c%d", name, 'a'+rng.IntN(26), j), template(hash).Labels, now)
		p.OwnerReferences = []metav1.OwnerReference{ctrlRef("ReplicaSet", name, rs.UID)}
		pods = append(pods, p)
	}
	return rs, pods
}

// TestThreeShrinkClassShape: the class draws what it is for. Of 24 drawn
// (and settled by the real controllers, as the long run does), most must
// shrink all three ReplicaSets in the scale's own sync.
func TestThreeShrinkClassShape(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("settles 24 clusters: the long run only")
	}
	seed := uint64(envInt("INPROCESS_SEED", 20261123))
	three := 0
	for k := range 24 {
		i := k*threeShrinkEvery + threeShrinkEvery - 1
		sc := threeShrinkScenario(threeShrinkRand(seed, i), i, time.Now())
		p, err := prepare(sc, seed+0x3e5000+uint64(i))
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		shrunk := 0
		for _, r := range p.pred.ReplicaSets {
			if r.AfterScale < r.Before {
				shrunk++
			}
		}
		if shrunk == 3 {
			three++
		}
		t.Logf("%s: %s", sc.name, describe(p.pred))
	}
	t.Logf("%d of 24 shrink three ReplicaSets in the scale's sync", three)
	if three < 16 {
		t.Errorf("only %d of 24 drawn shrink three ReplicaSets at once", three)
	}
}
