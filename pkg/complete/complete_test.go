package complete

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

var yes = true

func ctl(kind, name string, uid types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{Kind: kind, Name: name, UID: uid, Controller: &yes}}
}

// web: Deployment web -> ReplicaSet web-1 (status 3) -> pods as given.
func web(pods ...*corev1.Pod) *snapshot.Snapshot {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "d", Generation: 2},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns", UID: "rs", Generation: 1, OwnerReferences: ctl("Deployment", "web", "d")},
		Status: appsv1.ReplicaSetStatus{ObservedGeneration: 1, Replicas: 3}}
	return &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{rs}, Pods: pods}
}

func pod(name string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", OwnerReferences: ctl("ReplicaSet", "web-1", "rs")},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func terminating(p *corev1.Pod) { ts := metav1.NewTime(time.Unix(0, 0)); p.DeletionTimestamp = &ts }
func failed(p *corev1.Pod)      { p.Status.Phase = corev1.PodFailed }

var deploy = snapshot.Ref{Kind: snapshot.Deployment, Namespace: "ns", Name: "web"}

func TestComplete(t *testing.T) {
	r, err := Check(web(pod("a"), pod("b"), pod("c")), deploy, false)
	if err != nil || len(r.Uncertain) != 0 {
		t.Fatalf("whole snapshot: %v %v", r.Uncertain, err)
	}
	// A finished pod is not counted by the status, nor here.
	if r, err := Check(web(pod("a"), pod("b"), pod("c"), pod("x", failed)), deploy, false); err != nil || len(r.Uncertain) != 0 {
		t.Fatalf("finished pod: %v %v", r.Uncertain, err)
	}
}

func TestNoPodsIsAnErrorOffline(t *testing.T) {
	_, err := Check(web(), deploy, false)
	var ie *IncompleteError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "kubectl get deploy,rs,pods -n ns -o yaml") {
		t.Fatalf("err %v", err)
	}
	// Live, the same disagreement is a moving cluster: uncertain.
	r, err := Check(web(), deploy, true)
	if err != nil || len(r.Uncertain) != 1 {
		t.Fatalf("live: %v %v", r.Uncertain, err)
	}
}

func TestNoReplicaSets(t *testing.T) {
	s := web(pod("a"), pod("b"), pod("c"))
	s.ReplicaSets = nil
	_, err := Check(s, deploy, false)
	if err == nil || !strings.Contains(err.Error(), "none of its ReplicaSets") {
		t.Fatalf("err %v", err)
	}
	// A Deployment whose status counts nothing needs no ReplicaSet.
	s.Deployments[0].Status.Replicas = 0
	if _, err := Check(s, deploy, false); err != nil {
		t.Fatal(err)
	}
}

func TestUncertainCases(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *snapshot.Snapshot
		want string
	}{
		{"fewer pods", web(pod("a"), pod("b")), "deleted since the status"},
		{"more pods", web(pod("a"), pod("b"), pod("c"), pod("d")), "created since the status"},
		{"terminating still counted", web(pod("a"), pod("b"), pod("c", terminating)), "now terminating"},
		{"generation not observed", func() *snapshot.Snapshot {
			s := web(pod("a"), pod("b"), pod("c"))
			s.ReplicaSets[0].Generation = 2
			return s
		}(), "not yet observed"},
		{"deployment status behind", func() *snapshot.Snapshot {
			s := web(pod("a"), pod("b"), pod("c"))
			s.Deployments[0].Status.Replicas = 4
			return s
		}(), "its ReplicaSets 3"},
		{"unsettled live read", func() *snapshot.Snapshot {
			s := web(pod("a"), pod("b"), pod("c"))
			s.Unsettled = []string{"changed while it was read"}
			return s
		}(), "changed while"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Check(tc.s, deploy, false)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(r.Summary(), tc.want) {
				t.Fatalf("reasons %q, want %q", r.Summary(), tc.want)
			}
			p := &prediction.Prediction{Certain: true}
			r.Apply(p)
			if p.Certain || len(p.Incomplete) == 0 || len(p.Warnings) == 0 {
				t.Fatalf("not marked: %+v", p)
			}
		})
	}
}

func TestHandWrittenStatusIsNotChecked(t *testing.T) {
	s := web()
	s.Deployments[0].Status = appsv1.DeploymentStatus{}
	s.ReplicaSets[0].Status = appsv1.ReplicaSetStatus{}
	if r, err := Check(s, deploy, false); err != nil || len(r.Uncertain) != 0 {
		t.Fatalf("%v %v", r.Uncertain, err)
	}
}

func TestDuplicatePod(t *testing.T) {
	_, err := Check(web(pod("a"), pod("b"), pod("a")), deploy, false)
	var de *DuplicateError
	if !errors.As(err, &de) || de.Name != "a" || !strings.Contains(err.Error(), "Pod ns/a") {
		t.Fatalf("err %v", err)
	}
	// The same name in two namespaces is two pods.
	b := pod("a")
	b.Namespace = "other"
	if _, err := Check(web(pod("a"), b, pod("c")), deploy, false); err != nil {
		t.Fatal(err)
	}
}

func TestStatefulSet(t *testing.T) {
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "s", Generation: 1},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 3}}
	sp := func(name string, opts ...func(*corev1.Pod)) *corev1.Pod {
		p := pod(name, opts...)
		p.OwnerReferences = ctl("StatefulSet", "db", "s")
		return p
	}
	ref := snapshot.Ref{Kind: snapshot.StatefulSet, Namespace: "ns", Name: "db"}
	// Its status counts terminating and finished pods too.
	s := &snapshot.Snapshot{StatefulSets: []*appsv1.StatefulSet{set}, Pods: []*corev1.Pod{sp("db-0"), sp("db-1", terminating), sp("db-2", failed)}}
	if r, err := Check(s, ref, false); err != nil || len(r.Uncertain) != 0 {
		t.Fatalf("%v %v", r.Uncertain, err)
	}
	s.Pods = nil
	if _, err := Check(s, ref, false); err == nil || !strings.Contains(err.Error(), "kubectl get sts,pods,pvc") {
		t.Fatalf("err %v", err)
	}
}

func TestReplicationController(t *testing.T) {
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "ns", UID: "rc"},
		Status: corev1.ReplicationControllerStatus{ObservedGeneration: 1, Replicas: 2}}
	ref := snapshot.Ref{Kind: snapshot.ReplicationController, Namespace: "ns", Name: "old"}
	s := &snapshot.Snapshot{ReplicationControllers: []*corev1.ReplicationController{rc}}
	if _, err := Check(s, ref, false); err == nil || !strings.Contains(err.Error(), "kubectl get rc,pods") {
		t.Fatalf("err %v", err)
	}
}

func TestNameless(t *testing.T) {
	var ne *NamelessError
	if _, err := Check(web(pod("a"), pod("")), deploy, false); !errors.As(err, &ne) || !strings.Contains(err.Error(), "no metadata.name") {
		t.Fatalf("err %v", err)
	}
	p := pod("b")
	p.Namespace = ""
	if _, err := Check(web(pod("a"), p), deploy, false); !errors.As(err, &ne) || !strings.Contains(err.Error(), "Pod b") {
		t.Fatalf("err %v", err)
	}
}
