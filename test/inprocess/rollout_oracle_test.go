package inprocess

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rollout"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// rolloutScenario: a settled Deployment of 3-8 ready pods on 1-3 cordoned
// nodes, one more node (node-new) where every new pod goes. New pods then
// never share a node with an old one, so when the test binds them does not
// change the old pods' ranks.
func rolloutScenario(rng *rand.Rand, now time.Time) []runtime.Object {
	n := int32(3 + rng.IntN(6))
	nodes := 1 + rng.IntN(3)
	strat := strategies[rng.IntN(len(strategies))]
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: depName, Namespace: ns, UID: "uid-web", CreationTimestamp: metav1.NewTime(now.Add(-300 * day))},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": depName}},
			Template: template(""), ProgressDeadlineSeconds: ptrTo(int32(600)), RevisionHistoryLimit: ptrTo(int32(10)),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &strat[0], MaxUnavailable: &strat[1]}}},
	}
	if rng.IntN(5) == 0 {
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	}
	name := depName + "-h0"
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), Labels: template("h0").Labels,
			CreationTimestamp: metav1.NewTime(now.Add(-100 * day)),
			OwnerReferences:   []metav1.OwnerReference{ctrlRef("Deployment", depName, d.UID)},
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "1",
				"deployment.kubernetes.io/desired-replicas": fmt.Sprint(n)}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptrTo(n), Selector: &metav1.LabelSelector{MatchLabels: template("h0").Labels}, Template: template("h0")},
	}
	d.Spec.Template = template("h0")
	delete(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	objs := []runtime.Object{d, rs}
	for j := range n {
		st := podState{node: fmt.Sprintf("node-%c", 'a'+rng.IntN(nodes)), phase: corev1.PodRunning, ready: true, readyAgo: randomAge(rng)}
		if rng.IntN(4) == 0 { // some ready in the same second, to make ties
			st.readyAgo = 3 * day
		}
		st.created = st.readyAgo + time.Minute
		p := st.pod(fmt.Sprintf("%s-%c%d", name, 'a'+rng.IntN(26), j), template("h0").Labels, now)
		p.OwnerReferences = []metav1.OwnerReference{ctrlRef("ReplicaSet", name, rs.UID)}
		objs = append(objs, p)
	}
	return objs
}

// rolloutNodes are the scheduler's nodes: the old pods' cordoned, and node-new.
func rolloutNodes() []*corev1.Node {
	room := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")}
	var out []*corev1.Node
	for _, name := range []string{"node-a", "node-b", "node-c", "node-new"} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
			Spec:   corev1.NodeSpec{Unschedulable: name != "node-new"},
			Status: corev1.NodeStatus{Allocatable: room, Capacity: room, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		out = append(out, n)
	}
	return out
}

// predictRollout is the plugin's answer from the settled state.
func predictRollout(c *cluster, now time.Time) (*rollout.Result, error) {
	ds, rss, pods, err := c.state(ns)
	if err != nil {
		return nil, err
	}
	in := rollout.Input{Nodes: rolloutNodes(), Change: rollout.Change{Kind: rollout.ChangeRestart}, Now: now,
		Rules: rules.Defaults(37), Scheduler: rules.Scheduler(37, nil)}
	in.Deployment = &ds.Items[0]
	for i := range rss.Items {
		in.ReplicaSets = append(in.ReplicaSets, &rss.Items[i])
	}
	for i := range pods.Items {
		in.Pods = append(in.Pods, &pods.Items[i])
	}
	in.Workloads = disruption.Workloads{Deployments: []*appsv1.Deployment{in.Deployment}, ReplicaSets: in.ReplicaSets}
	return rollout.Predict(in)
}

// restart is kubectl rollout restart at now.
func (c *cluster) restart(now time.Time) error {
	ctx := context.Background()
	for range 20 {
		d, err := c.cs.AppsV1().Deployments(ns).Get(ctx, depName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Spec.Template.Annotations == nil {
			d.Spec.Template.Annotations = map[string]string{}
		}
		d.Spec.Template.Annotations[rollout.RestartedAtAnnotation] = now.Format(time.RFC3339)
		if _, err = c.cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{}); err == nil {
			return nil
		}
	}
	return fmt.Errorf("could not restart")
}

// stepOnce is the kubelet and the scheduler between two steps: the
// terminating pods go, the pending ones are bound to node-new and, unless
// bad, become Ready. It returns the old pods deleted since the last call.
func (c *cluster) stepOnce(old map[string]bool, seen map[string]bool, bad bool) (deleted []string, acted bool, err error) {
	ctx := context.Background()
	_, _, pods, err := c.state(ns)
	if err != nil {
		return nil, false, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case p.DeletionTimestamp != nil:
			if old[p.Name] && !seen[p.Name] {
				seen[p.Name] = true
				deleted = append(deleted, ns+"/"+p.Name)
			}
			c.api.mu.Lock()
			err = c.api.ObjectTracker.Delete(podsGVR, ns, p.Name)
			c.api.touched(podsGVR)
			c.api.mu.Unlock()
			acted = true
		case p.Spec.NodeName == "":
			p.Spec.NodeName = "node-new"
			if p, err = c.cs.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{}); err == nil && !bad {
				p.Status.Phase = corev1.PodRunning
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
				_, err = c.cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			}
			acted = true
		}
		if err != nil {
			return nil, false, err
		}
	}
	slices.Sort(deleted)
	return deleted, acted, nil
}

// runRollout restarts the Deployment and steps it until nothing moves:
// the old pods deleted at each step.
func runRollout(c *cluster, now time.Time, bad bool) ([][]string, error) {
	_, _, pods, err := c.state(ns)
	if err != nil {
		return nil, err
	}
	old, seen := map[string]bool{}, map[string]bool{}
	for _, p := range pods.Items {
		old[p.Name] = true
	}
	if err := c.restart(now); err != nil {
		return nil, err
	}
	var steps [][]string
	for range 100 {
		if err := c.settle(30 * time.Second); err != nil {
			return nil, err
		}
		del, acted, err := c.stepOnce(old, seen, bad)
		if err != nil {
			return nil, err
		}
		if !acted {
			break
		}
		steps = append(steps, del)
	}
	return steps, nil
}

// predictedSteps: each step's deleted set, sorted (the controller deletes
// a step's pods concurrently).
func predictedSteps(r prediction.Rollout) [][]string {
	var out [][]string
	for _, s := range r.Steps {
		out = append(out, slices.Sorted(slices.Values(s.Deleted)))
	}
	return out
}

// trimEmpty drops trailing empty steps (the run's last pass sees nothing).
func trimEmpty(s [][]string) string {
	for len(s) > 0 && len(s[len(s)-1]) == 0 {
		s = s[:len(s)-1]
	}
	return fmt.Sprint(s)
}

// TestRolloutAgainstControllers: seeded random Deployments restarted under
// the real deployment and ReplicaSet controllers. Where the prediction is
// certain, each step's deleted set must equal the controllers'; and so
// must the bad release's (new pods never Ready). ROLLOUT_SCENARIOS and
// INPROCESS_SEED tune it; -short runs a few.
func TestRolloutAgainstControllers(t *testing.T) {
	t.Parallel()
	scenarios := envInt("ROLLOUT_SCENARIOS", 200)
	if testing.Short() {
		scenarios = envInt("ROLLOUT_SCENARIOS", 6)
	}
	seed := uint64(envInt("INPROCESS_SEED", 20261128))
	rng := rand.New(rand.NewPCG(seed, 0x40))
	agree, uncertain, disagree := 0, 0, 0
	for i := range scenarios {
		objs := rolloutScenario(rng, time.Now())
		for _, bad := range []bool{false, true} {
			switch rolloutOne(t, i, objs, seed+uint64(i), bad) {
			case "agree":
				agree++
			case "uncertain":
				uncertain++
			default:
				disagree++
			}
		}
	}
	t.Logf("INPROCESS_SEED=%d ROLLOUT_SCENARIOS=%d: %d runs agree step by step, %d uncertain (not compared), %d disagree", seed, scenarios, agree, uncertain, disagree)
}

func rolloutOne(t *testing.T, i int, objs []runtime.Object, seed uint64, bad bool) string {
	c, err := startCluster(objs, seed, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.stop()
	if err := c.settle(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	res, err := predictRollout(c, now)
	if err != nil {
		t.Fatal(err)
	}
	got, err := runRollout(c, now, bad)
	if err != nil {
		t.Fatal(err)
	}
	want := trimEmpty(predictedSteps(res.Rollout))
	if bad {
		want = trimEmpty([][]string{slices.Sorted(slices.Values(res.Rollout.IfNewPodsFail.Deleted))})
		got = [][]string{slices.Sorted(slices.Values(slices.Concat(got...)))}
	}
	gotS := trimEmpty(got)
	if gotS == want {
		return "agree"
	}
	if !res.Certain {
		t.Logf("scenario %d (bad release %v), uncertain: predicted %s, controllers %s", i, bad, want, gotS)
		return "uncertain"
	}
	t.Errorf("scenario %d (bad release %v, %s): predicted %s, controllers %s", i, bad, strings.Join(res.Warnings, "; "), want, gotS)
	return "disagree"
}
