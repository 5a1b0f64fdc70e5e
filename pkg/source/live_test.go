package source

import (
	"context"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

func liveRS(name, hash, owner string) *appsv1.ReplicaSet {
	sel := map[string]string{"app": "web", "pod-template-hash": hash}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("uid-" + name), Labels: sel},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}},
	}
	if owner != "" {
		yes := true
		rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: types.UID(owner), Controller: &yes}}
	}
	return rs
}

func livePod(name, ns string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}}}
}

func podNamesOf(s *snapshot.Snapshot) []string {
	var out []string
	for _, p := range s.Pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// A Deployment-owned ReplicaSet: its siblings' pods count toward ranks, so
// Load lists every ReplicaSet and the pods the siblings share labels with.
func TestLiveLoadReplicaSetWithSiblings(t *testing.T) {
	objs := []runtime.Object{
		liveRS("web-a", "a", "dep"), liveRS("web-b", "b", "dep"), liveRS("solo", "s", ""),
		livePod("web-a-1", "shop", map[string]string{"app": "web", "pod-template-hash": "a"}),
		livePod("web-b-1", "shop", map[string]string{"app": "web", "pod-template-hash": "b"}),
		livePod("db-1", "shop", map[string]string{"app": "db"}),
		livePod("web-a-elsewhere", "other", map[string]string{"app": "web", "pod-template-hash": "a"}),
	}
	c := fake.NewClientset(objs...)
	s, err := (&Live{Client: c}).Load(context.Background(), snapshot.Ref{Kind: snapshot.ReplicaSet, Namespace: "shop", Name: "web-a"})
	if err != nil {
		t.Fatal(err)
	}
	if got := podNamesOf(s); len(got) != 2 || got[0] != "web-a-1" || got[1] != "web-b-1" {
		t.Errorf("pods %v, want web-a-1 and web-b-1", got)
	}
	if len(s.ReplicaSets) != 3 {
		t.Errorf("%d ReplicaSets, want all 3 of the namespace", len(s.ReplicaSets))
	}
	for _, p := range s.Pods {
		if p.ManagedFields != nil {
			t.Errorf("%s: managedFields not stripped", p.Name)
		}
	}
	onlyReads(t, c)

	// A standalone ReplicaSet: only its own pods, no ReplicaSet list.
	c = fake.NewClientset(objs...)
	s, err = (&Live{Client: c}).Load(context.Background(), snapshot.Ref{Kind: snapshot.ReplicaSet, Namespace: "shop", Name: "solo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 0 || len(s.ReplicaSets) != 1 {
		t.Errorf("standalone: pods %v, %d ReplicaSets", podNamesOf(s), len(s.ReplicaSets))
	}
	onlyReads(t, c)
}

func TestLiveLoadNotFound(t *testing.T) {
	for _, kind := range []string{snapshot.Deployment, snapshot.ReplicaSet, snapshot.ReplicationController, snapshot.StatefulSet} {
		_, err := (&Live{Client: fake.NewClientset()}).Load(context.Background(), snapshot.Ref{Kind: kind, Namespace: "shop", Name: "nope"})
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s: err %v, want NotFound", kind, err)
		}
	}
}

func onlyReads(t *testing.T, c *fake.Clientset) {
	t.Helper()
	for _, a := range c.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" {
			t.Errorf("write-like action %s %s", v, a.GetResource().Resource)
		}
	}
}
