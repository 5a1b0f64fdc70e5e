package inprocess

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	ns      = "ns"
	depName = "web"
	day     = 24 * time.Hour
)

// scenario is a Deployment, its ReplicaSets and pods before the scale.
type scenario struct {
	name   string
	objs   []runtime.Object
	target int32
}

var strategies = [][2]intstr.IntOrString{
	{intstr.FromString("25%"), intstr.FromString("25%")},
	{intstr.FromInt32(1), intstr.FromInt32(0)},
	{intstr.FromInt32(2), intstr.FromInt32(1)},
	{intstr.FromInt32(0), intstr.FromInt32(1)},
	{intstr.FromInt32(3), intstr.FromInt32(2)},
	{intstr.FromString("50%"), intstr.FromString("0%")},
}

// podState is what a generated pod looks like.
type podState struct {
	node     string
	phase    corev1.PodPhase
	ready    bool
	readyAgo time.Duration
	created  time.Duration
	restarts int32
	cost     string
}

func randomAge(rng *rand.Rand) time.Duration {
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }
	switch x := rng.IntN(100); {
	case x < 25:
		return between(5*time.Minute, 50*time.Minute)
	case x < 50:
		return between(time.Hour, 20*time.Hour)
	case x < 75:
		return between(day, 25*day)
	default:
		return between(30*day, 200*day)
	}
}

func randomPodState(rng *rand.Rand, nodes int, fresh bool) podState {
	return randomPodStateReady(rng, nodes, map[bool]int{false: 75, true: 15}[fresh])
}

// randomPodStateReady: readyChance percent of the pods on a node are ready.
func randomPodStateReady(rng *rand.Rand, nodes int, readyChance int) podState {
	st := podState{phase: corev1.PodRunning}
	if rng.IntN(100) < 12 {
		st.phase = corev1.PodPending
	} else {
		st.node = fmt.Sprintf("node-%c", 'a'+rng.IntN(nodes))
		if x := rng.IntN(100); x < readyChance {
			st.ready = true
			st.readyAgo = randomAge(rng)
		} else if x < readyChance+8 {
			st.phase = corev1.PodPending
		}
	}
	st.created = st.readyAgo + time.Duration(30+rng.IntN(300))*time.Second
	if !st.ready {
		st.created = randomAge(rng)
	}
	if rng.IntN(100) < 25 {
		st.restarts = int32(1 + rng.IntN(5))
	}
	if rng.IntN(100) < 15 {
		st.cost = strconv.Itoa(rng.IntN(11) - 5)
	}
	return st
}

func (st podState) pod(name string, labels map[string]string, now time.Time) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(now.Add(-st.created).Truncate(time.Second))},
		Spec:   corev1.PodSpec{NodeName: st.node, Containers: []corev1.Container{{Name: "app", Image: "img"}}},
		Status: corev1.PodStatus{Phase: st.phase},
	}
	if st.cost != "" {
		p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": st.cost}
	}
	if st.phase == corev1.PodRunning {
		cond := corev1.ConditionFalse
		t := now.Add(-time.Minute)
		if st.ready {
			cond, t = corev1.ConditionTrue, now.Add(-st.readyAgo)
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: cond, LastTransitionTime: metav1.NewTime(t.Truncate(time.Second))}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: st.restarts, Ready: st.ready}}
	}
	return p
}

func ctrlRef(kind, name string, uid types.UID) metav1.OwnerReference {
	api := "apps/v1"
	return metav1.OwnerReference{APIVersion: api, Kind: kind, Name: name, UID: uid, Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}
}

func template(hash string) corev1.PodTemplateSpec {
	labels := map[string]string{"app": depName}
	if hash != "" {
		labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:" + hash}}}}
}

// randomScenario: a Deployment of 3-10 replicas mid-rollout over 1-3
// ReplicaSets (most often 2-3), with terminating, foreign and orphan pods,
// exact ties and deletion costs, scaled in to a random smaller size (some
// scale-ups too).
func randomScenario(rng *rand.Rand, i int, now time.Time) *scenario {
	n := int32(3 + rng.IntN(8))
	nodes := 1 + rng.IntN(4)
	// A quarter are rank races: every pod ready on two nodes, in two ready
	// buckets, so that co-location ranks decide many comparisons.
	race := rng.IntN(4) == 0
	if race {
		nodes = 2
	}
	strat := strategies[rng.IntN(len(strategies))]
	// Every fifth is late in its rollout: the new ReplicaSet mostly ready,
	// the old ones mostly not (a stale status of the new one then lets the
	// rollout go further than the fresh one, rollout-rare-certain's class).
	late := !race && i%5 == 4
	nRS := 2 + rng.IntN(2)
	if rng.IntN(100) < 12 {
		nRS = 1
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: depName, Namespace: ns, UID: "uid-web", CreationTimestamp: metav1.NewTime(now.Add(-300 * day))},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": depName}},
			Template: template(fmt.Sprintf("h%d", nRS-1)), ProgressDeadlineSeconds: ptrTo(int32(600)), RevisionHistoryLimit: ptrTo(int32(10)),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &strat[0], MaxUnavailable: &strat[1]}}},
	}
	delete(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	sc := &scenario{objs: []runtime.Object{d}}
	// Split n (plus up to the surge) over the ReplicaSets, newest smallest.
	sizes := make([]int32, nRS)
	left := n + int32(rng.IntN(2))
	for r := 0; r < nRS; r++ {
		if r == nRS-1 {
			sizes[r] = left
			break
		}
		sizes[r] = int32(rng.IntN(int(left) + 1))
		left -= sizes[r]
	}
	var allPods []*corev1.Pod
	for r := 0; r < nRS; r++ {
		hash := fmt.Sprintf("h%d", r)
		name := depName + "-" + hash
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), Labels: template(hash).Labels,
				CreationTimestamp: metav1.NewTime(now.Add(-time.Duration(100*(nRS-r)) * day)),
				OwnerReferences:   []metav1.OwnerReference{ctrlRef("Deployment", depName, d.UID)},
				Annotations: map[string]string{"deployment.kubernetes.io/revision": strconv.Itoa(r + 1),
					"deployment.kubernetes.io/desired-replicas": strconv.Itoa(int(n))}},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptrTo(sizes[r]), Selector: &metav1.LabelSelector{MatchLabels: template(hash).Labels}, Template: template(hash)},
		}
		sc.objs = append(sc.objs, rs)
		for j := int32(0); j < sizes[r]; j++ {
			st := randomPodState(rng, nodes, r == nRS-1 && nRS > 1)
			if late && nRS > 1 {
				st = randomPodStateReady(rng, nodes, map[bool]int{false: 25, true: 80}[r == nRS-1])
			}
			if race {
				st = podState{node: fmt.Sprintf("node-%c", 'a'+rng.IntN(2)), phase: corev1.PodRunning, ready: true,
					readyAgo: []time.Duration{3 * day, 40 * day}[rng.IntN(2)] + time.Duration(rng.IntN(3600))*time.Second}
				st.created = st.readyAgo + time.Minute
			}
			if len(allPods) > 0 && rng.IntN(100) < 20 {
				st = podStateOf(allPods[rng.IntN(len(allPods))], now) // an exact tie with an earlier pod
			}
			p := st.pod(fmt.Sprintf("%s-%c%d", name, 'a'+rng.IntN(26), j), template(hash).Labels, now)
			p.OwnerReferences = []metav1.OwnerReference{ctrlRef("ReplicaSet", name, rs.UID)}
			allPods = append(allPods, p)
		}
	}
	var tags []string
	if rng.IntN(100) < 20 && len(allPods) > 0 {
		t := allPods[rng.IntN(len(allPods))].DeepCopy()
		t.Name, t.UID = "zz-terminating", "uid-zz-terminating"
		if t.Spec.NodeName == "" {
			t.Spec.NodeName = "node-a"
		}
		t.DeletionTimestamp = ptrTo(metav1.NewTime(now.Add(-10 * time.Second)))
		t.DeletionGracePeriodSeconds = ptrTo(int64(30))
		allPods = append(allPods, t)
		tags = append(tags, "terminating")
	}
	if rng.IntN(100) < 15 && len(allPods) > 0 {
		f := allPods[rng.IntN(len(allPods))].DeepCopy()
		f.Name, f.UID = "zz-foreign", "uid-zz-foreign"
		f.OwnerReferences = []metav1.OwnerReference{ctrlRef("ReplicaSet", "other", "uid-other")}
		allPods = append(allPods, f)
		tags = append(tags, "foreign")
	}
	if rng.IntN(100) < 20 {
		o := randomPodState(rng, nodes, false).pod("zz-orphan", map[string]string{"app": depName}, now)
		allPods = append(allPods, o)
		tags = append(tags, "orphan")
	}
	for _, p := range allPods {
		sc.objs = append(sc.objs, p)
	}
	sc.target = int32(rng.IntN(int(n)))
	if rng.IntN(100) < 8 {
		sc.target = n + int32(1+rng.IntN(5))
		tags = append(tags, "scale-up")
	}
	sc.name = fmt.Sprintf("%04d-%drs-%dto%d-surge%s-unavail%s", i, nRS, n, sc.target, strat[0].String(), strat[1].String())
	if race {
		tags = append(tags, "rank-race")
	}
	if late && nRS > 1 {
		tags = append(tags, "late-rollout")
	}
	for _, t := range tags {
		sc.name += "-" + t
	}
	return sc
}

func podStateOf(p *corev1.Pod, now time.Time) podState {
	st := podState{node: p.Spec.NodeName, phase: p.Status.Phase, created: now.Sub(p.CreationTimestamp.Time)}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			st.ready, st.readyAgo = true, now.Sub(c.LastTransitionTime.Time)
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		st.restarts = c.RestartCount
	}
	st.cost = p.Annotations["controller.kubernetes.io/pod-deletion-cost"]
	return st
}
