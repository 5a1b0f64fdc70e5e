package scheduling

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// randCluster is a small cluster that exercises every filter: zones,
// taints, cordons, extended resources, host ports, required
// (anti-)affinity with namespaces and namespaceSelectors, topology spread,
// nominated and finished pods.
type randCluster struct {
	r      *rand.Rand
	nodes  []*corev1.Node
	pods   []*corev1.Pod
	ns     []*corev1.Namespace
	serial int
}

func newRandCluster(seed uint64) *randCluster {
	rc := &randCluster{r: rand.New(rand.NewPCG(seed, 34))}
	for i := range 3 {
		rc.ns = append(rc.ns, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("ns", i), Labels: map[string]string{"team": fmt.Sprint("t", i%2)}}})
	}
	for i := range 2 + rc.r.IntN(10) {
		rc.nodes = append(rc.nodes, rc.node(i))
	}
	for range rc.r.IntN(60) {
		rc.pods = append(rc.pods, rc.pod(true))
	}
	return rc
}

func (rc *randCluster) pick(s ...string) string { return s[rc.r.IntN(len(s))] }

func (rc *randCluster) node(i int) *corev1.Node {
	name := fmt.Sprint("n", i)
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(500+rc.r.IntN(4000)), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(int64(1+rc.r.IntN(8))<<30, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(int64(2+rc.r.IntN(12)), resource.DecimalSI),
	}
	if rc.r.IntN(3) == 0 {
		alloc["example.com/gpu"] = *resource.NewQuantity(int64(rc.r.IntN(3)), resource.DecimalSI)
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name,
		corev1.LabelTopologyZone: rc.pick("a", "b", "c")}}, Status: corev1.NodeStatus{Allocatable: alloc}}
	if rc.r.IntN(5) == 0 {
		delete(n.Labels, corev1.LabelTopologyZone)
	}
	n.Spec.Unschedulable = rc.r.IntN(6) == 0
	if rc.r.IntN(5) == 0 {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
	}
	return n
}

func (rc *randCluster) terms() []corev1.PodAffinityTerm {
	if rc.r.IntN(3) != 0 {
		return nil
	}
	t := corev1.PodAffinityTerm{TopologyKey: rc.pick(corev1.LabelHostname, corev1.LabelTopologyZone),
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": rc.pick("a", "b", "c")}}}
	switch rc.r.IntN(3) {
	case 0:
		t.Namespaces = []string{rc.pick("ns0", "ns1", "ns2")}
	case 1:
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": rc.pick("t0", "t1")}}
	}
	return []corev1.PodAffinityTerm{t}
}

func (rc *randCluster) pod(bound bool) *corev1.Pod {
	rc.serial++
	name := fmt.Sprint("p", rc.serial)
	prio := int32(rc.r.IntN(3) * 100)
	c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: *resource.NewMilliQuantity(int64(rc.r.IntN(1500)), resource.DecimalSI)}}}
	if rc.r.IntN(4) == 0 {
		c.Resources.Requests["example.com/gpu"] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	if rc.r.IntN(4) == 0 {
		c.Ports = []corev1.ContainerPort{{HostPort: int32(8080 + rc.r.IntN(2)), HostIP: rc.pick("", "10.0.0.1")}}
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rc.pick("ns0", "ns1", "ns2"), UID: k8stypes.UID("uid-" + name),
		Labels: map[string]string{"app": rc.pick("a", "b", "c")}},
		Spec:   corev1.PodSpec{Priority: &prio, Containers: []corev1.Container{c}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if rc.r.IntN(4) == 0 { // pod-level resources count when the rules say so
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: *resource.NewMilliQuantity(int64(1500+rc.r.IntN(1500)), resource.DecimalSI)}}
	}
	if rc.r.IntN(3) == 0 {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
	}
	if aff, anti := rc.terms(), rc.terms(); aff != nil || anti != nil {
		p.Spec.Affinity = &corev1.Affinity{}
		if aff != nil {
			p.Spec.Affinity.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: aff}
		}
		if anti != nil {
			p.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: anti}
		}
	}
	if rc.r.IntN(3) == 0 {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: rc.pick(corev1.LabelHostname, corev1.LabelTopologyZone),
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}}}
	}
	switch {
	case !bound:
		p.Status.Phase = corev1.PodPending
	case rc.r.IntN(8) == 0:
		p.Status.Phase = corev1.PodPending
		p.Status.NominatedNodeName = rc.nodes[rc.r.IntN(len(rc.nodes))].Name
	default:
		p.Spec.NodeName = rc.nodes[rc.r.IntN(len(rc.nodes))].Name
		if rc.r.IntN(10) == 0 {
			p.Status.Phase = corev1.PodSucceeded
		}
		if rc.r.IntN(3) == 0 { // resized in place: the status's requests count when the rules say so
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: *resource.NewMilliQuantity(int64(rc.r.IntN(3000)), resource.DecimalSI)}}}}
		}
	}
	return p
}

// step changes the cluster as a drain does, by replacing pointers: a pod
// removed, a pending pod bound (a copy), a node cordoned (a copy).
func (rc *randCluster) step(pending *corev1.Pod, node string) {
	if len(rc.pods) > 0 && rc.r.IntN(2) == 0 {
		i := rc.r.IntN(len(rc.pods))
		rc.pods = append(rc.pods[:i], rc.pods[i+1:]...)
	}
	if node != "" {
		b := pending.DeepCopy()
		b.Spec.NodeName, b.Status.Phase = node, corev1.PodRunning
		rc.pods = append(rc.pods, b)
	}
	if i := rc.r.IntN(len(rc.nodes)); rc.r.IntN(3) == 0 {
		n := rc.nodes[i].DeepCopy()
		n.Spec.Unschedulable = true
		rc.nodes[i] = n
	}
}

// largeCluster is issue 34's cluster (5,000 nodes, 150,000 pods; -short:
// 200 nodes) without its pending pod.
func largeCluster() Input {
	spec := sourcetest.ClusterSize
	if testing.Short() {
		spec.Nodes = 200
	}
	c := sourcetest.Cluster(spec)
	return Input{Rules: rules.Scheduler(rules.Newest, nil), Nodes: c.Nodes, Pods: c.Pods[:len(c.Pods)-1]}
}

// BenchmarkPlaceLargeCluster places one small replacement pod after
// another in the large cluster: fresh builds the scheduler's cluster over
// every pod on each call; view places in a View built once, as the drain
// does.
func BenchmarkPlaceLargeCluster(b *testing.B) {
	in := largeCluster()
	in.Pod = pod("replacement", "", "100m")
	in.Pod.Namespace = in.Pods[0].Namespace
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if pl, err := Place(in); err != nil || len(pl.Feasible) == 0 && pl.FitError == "" {
				b.Fatalf("%v %+v", err, pl)
			}
		}
	})
	b.Run("view", func(b *testing.B) {
		v, err := NewView(in.Nodes, in.Pods, nil, in.Rules)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if pl, err := v.Place(in.Pod); err != nil || len(pl.Feasible) == 0 && pl.FitError == "" {
				b.Fatalf("%v %+v", err, pl)
			}
		}
	})
}

// A View kept current as pods leave, land and change (Remove, Add) gives
// exactly the placements of a cluster built afresh over the same pods,
// over random clusters, rule sets and namespaces; a changed node set
// takes a new view, as a drain's cordons come before any placement. A
// clone changes apart from its original.
func TestViewEqualsFresh(t *testing.T) {
	ruleSets := []rules.SchedulerRules{rules.Scheduler(rules.Newest, nil), rules.Scheduler(23, nil),
		rules.Scheduler(rules.Newest, map[string]bool{rules.InPlacePodVerticalScaling: false, rules.PodLevelResources: false})}
	placed := 0
	for seed := range uint64(300) {
		rc := newRandCluster(seed)
		extra := rand.New(rand.NewPCG(seed, 35))
		r := ruleSets[int(seed)%len(ruleSets)]
		var ns []*corev1.Namespace
		if seed%2 == 0 {
			ns = rc.ns
		}
		var view *View
		for step := range 12 {
			if view == nil {
				var err error
				if view, err = NewView(rc.nodes, rc.pods, ns, r); err != nil {
					t.Fatal(err)
				}
			}
			pending := rc.pod(false)
			want, wantErr := Place(Input{Nodes: rc.nodes, Pods: rc.pods, Namespaces: ns, Pod: pending, Rules: r})
			got, gotErr := view.Place(pending)
			if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) || !reflect.DeepEqual(want, got) {
				t.Fatalf("seed %d step %d: view %+v %v, fresh %+v %v", seed, step, got, gotErr, want, wantErr)
			}
			node := ""
			if len(want.Feasible) > 0 {
				node = want.Feasible[rc.r.IntN(len(want.Feasible))]
				placed++
			}
			pods, nodes := slices.Clone(rc.pods), slices.Clone(rc.nodes)
			rc.step(pending, node)
			if len(rc.pods) > 0 && extra.IntN(3) == 0 { // a pod starts terminating: a changed copy
				i := extra.IntN(len(rc.pods))
				c := rc.pods[i].DeepCopy()
				c.DeletionTimestamp = &metav1.Time{}
				rc.pods[i] = c
			}
			if !slices.Equal(nodes, rc.nodes) {
				view = nil
				continue
			}
			var before *View
			if extra.IntN(3) == 0 { // a clone changes; the original must not
				before, view = view, view.Clone()
			}
			for _, p := range pods {
				if !slices.Contains(rc.pods, p) {
					view.Remove(p)
				}
			}
			for _, p := range rc.pods {
				if !slices.Contains(pods, p) {
					if err := view.Add(p); err != nil {
						t.Fatal(err)
					}
				}
			}
			if before != nil {
				if again, err := before.Place(pending); err != nil || !reflect.DeepEqual(again, want) {
					t.Fatalf("seed %d step %d: the view changed with its clone: %+v %v, was %+v", seed, step, again, err, want)
				}
			}
		}
	}
	if placed < 500 {
		t.Fatalf("only %d pods placed: the random clusters are too full to test much", placed)
	}
}
