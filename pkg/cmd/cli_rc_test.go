package cmd

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func rcObjects() []runtime.Object {
	yes := true
	owner := []metav1.OwnerReference{{APIVersion: "apps.openshift.io/v1", Kind: "DeploymentConfig", Name: "dc", UID: "dc-uid", Controller: &yes}}
	rc := func(name string) *corev1.ReplicationController {
		r := int32(2)
		return &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "prod", UID: types.UID("uid-" + name), OwnerReferences: owner},
			Spec: corev1.ReplicationControllerSpec{Replicas: &r, Selector: map[string]string{"app": "web", "deployment": name}}}
	}
	pod := func(name, rcName, node string, age time.Duration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "prod", UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web", "deployment": rcName},
			CreationTimestamp: metav1.NewTime(liveNow.Add(-age - time.Minute)),
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "v1", Kind: "ReplicationController", Name: rcName, UID: types.UID("uid-" + rcName), Controller: &yes}}},
			Spec:   corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(liveNow.Add(-age))}}}}
	}
	return []runtime.Object{rc("rc1"), rc("rc2"),
		pod("rc1-a", "rc1", "n1", 24*time.Hour), pod("rc1-b", "rc1", "n2", time.Hour),
		pod("rc2-a", "rc2", "n1", time.Hour), pod("rc2-b", "rc2", "n1", time.Hour)}
}

// getIndirectlyRelatedPods: in 1.21-1.23 an RC with a controller owner ranks by the pods
// of every RC with the same owner (rc1-a shares n1 with rc2's two pods:
// rank 3, so it goes before the more recently ready rc1-b). The workload
// model does this (pkg/workload TestReplicationControllerRanksByVersion);
// the live source must fetch the sibling RCs' pods for it.
func TestLiveRCWithOwnerGetsSiblingRanksIn123(t *testing.T) {
	// 1.24+: ranks 0 regardless, so rc1-b (ready 1h) goes by R6.
	c := fake.NewClientset(rcObjects()...)
	r := cliRun(t, c, nil, "rc/rc1", "--replicas=1", "-n", "prod", "--kube-version", "1.24", "--now", liveNowFlag, "-o", "json")
	if p := decode(t, r.stdout); fmt.Sprint(p.Victims) != "[rc1-b]" {
		t.Errorf("1.24 victims %v, want [rc1-b]", p.Victims)
	}

	c = fake.NewClientset(rcObjects()...)
	r = cliRun(t, c, nil, "rc/rc1", "--replicas=1", "-n", "prod", "--kube-version", "1.23", "--now", liveNowFlag, "-o", "json")
	wantExit(t, r, ExitOK)
	onlyReadActions(t, c)
	p := decode(t, r.stdout)
	ranks := map[string]int{}
	for _, x := range p.Pods {
		ranks[x.Name] = x.Rank
	}
	if fmt.Sprint(p.Victims) != "[rc1-a]" || ranks["rc1-a"] != 3 {
		t.Fatalf("BUG: pkg/source/live.go Load lists pods with the target RC's own selector only (podSelector = rc.Spec.Selector), so the sibling RCs' pods never reach the snapshot and 1.21-1.23 ranks undercount: victims %v, ranks %v; want [rc1-a] with rank 3 (offline gives that); list by the selectors of all RCs with the same controller, as the ReplicaSet path does with sharedLabels", p.Victims, ranks)
	}
}
