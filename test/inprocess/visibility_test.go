package inprocess

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// siblingRace is the smallest rank race: a paused Deployment (no rollout
// step) over two ReplicaSets of two ready pods, a (v1) and c (v2) sharing
// node n1. Scaled 4 -> 2, each ReplicaSet deletes one pod: by rank (a, c)
// if neither sees the other's victim gone, otherwise the one ranking
// second keeps its n1 pod and deletes its most recently ready one (b or d).
func siblingRace(now time.Time) *scenario {
	n := int32(4)
	zero, one := intstr.FromInt32(0), intstr.FromInt32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: depName, Namespace: ns, UID: "uid-web", CreationTimestamp: metav1.NewTime(now.Add(-300 * day))},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Paused: true, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": depName}},
			Template: template("h1"), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &zero, MaxUnavailable: &one}}},
	}
	delete(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	sc := &scenario{name: "sibling-race", target: 2, objs: []runtime.Object{d}}
	pods := map[string][]podState{
		"h0": {{node: "n1", phase: corev1.PodRunning, ready: true, readyAgo: day, created: day + time.Minute},
			{node: "n2", phase: corev1.PodRunning, ready: true, readyAgo: time.Hour, created: time.Hour + time.Minute}},
		"h1": {{node: "n1", phase: corev1.PodRunning, ready: true, readyAgo: day, created: day + time.Minute},
			{node: "n3", phase: corev1.PodRunning, ready: true, readyAgo: time.Hour, created: time.Hour + time.Minute}},
	}
	for r, hash := range []string{"h0", "h1"} {
		name := depName + "-" + hash
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), Labels: template(hash).Labels,
				CreationTimestamp: metav1.NewTime(now.Add(-time.Duration(20-10*r) * day)),
				OwnerReferences:   []metav1.OwnerReference{ctrlRef("Deployment", depName, d.UID)},
				Annotations:       map[string]string{"deployment.kubernetes.io/desired-replicas": "4", "deployment.kubernetes.io/max-replicas": "4"}},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptrTo(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: template(hash).Labels}, Template: template(hash)},
		}
		sc.objs = append(sc.objs, rs)
		for j, st := range pods[hash] {
			p := st.pod(fmt.Sprintf("%s-%c", hash, 'a'+j), template(hash).Labels, now)
			p.OwnerReferences = []metav1.OwnerReference{ctrlRef("ReplicaSet", name, rs.UID)}
			sc.objs = append(sc.objs, p)
		}
	}
	return sc
}

// TestSiblingVisibility measures how often each ReplicaSet sees its
// sibling's victim gone (the weights of the Deployment model's visibility
// choice) and checks the plugin's chances against the frequencies.
func TestSiblingVisibility(t *testing.T) {
	t.Parallel()
	runs := envInt("INPROCESS_RUNS", 50) * 2
	p, err := prepare(siblingRace(time.Now()), 99)
	if err != nil {
		t.Fatal(err)
	}
	outs := runRepeated(p, runs, envInt("INPROCESS_PARALLEL", 6), 5000, 1500*time.Microsecond)
	seen := map[string]int{}
	for _, o := range outs {
		seen[strings.Join(keys(o.deleted), ",")]++
	}
	var ls []string
	for k, v := range seen {
		ls = append(ls, fmt.Sprintf("{%s}: %d", k, v))
	}
	sort.Strings(ls)
	t.Logf("outcomes over %d runs (h0 written first): %s", runs, strings.Join(ls, " "))
	t.Logf("prediction: %s", describe(p.pred))
	rep := judge(p, outs)
	if len(rep.problems) > 0 {
		t.Errorf("%s\n  branches: %s", strings.Join(rep.problems, "; "), describeBranches(p.branches))
	}
}
