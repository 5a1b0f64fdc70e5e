package scheduling

import (
	"math/rand/v2"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// A bound pod's requests are PodRequests's with the status read, whether
// the status holds resources or not (statusResources skips the status
// only where it says nothing): random sidecars, init containers, statuses
// and resizes.
func TestRequestsReadTheStatusAsPodRequests(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 37))
	list := func() corev1.ResourceList {
		if r.IntN(4) == 0 {
			return nil
		}
		return corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(int64(r.IntN(2000)), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(int64(r.IntN(4))<<28, resource.BinarySI)}
	}
	always := corev1.ContainerRestartPolicyAlways
	rs := rules.Scheduler(rules.Newest, nil)
	for i := range 3000 {
		p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Resources: corev1.ResourceRequirements{Requests: list()}},
			{Name: "b", Resources: corev1.ResourceRequirements{Requests: list()}}}}}
		if r.IntN(3) == 0 {
			c := corev1.Container{Name: "init", Resources: corev1.ResourceRequirements{Requests: list()}}
			if r.IntN(2) == 0 {
				c.RestartPolicy = &always
			}
			p.Spec.InitContainers = []corev1.Container{c}
			if r.IntN(2) == 0 {
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", AllocatedResources: list()}}
			}
		}
		for _, name := range []string{"a", "b"} {
			if r.IntN(2) == 0 {
				cs := corev1.ContainerStatus{Name: name, AllocatedResources: list()}
				if r.IntN(2) == 0 {
					cs.Resources = &corev1.ResourceRequirements{Requests: list()}
				}
				p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, cs)
			}
		}
		if r.IntN(6) == 0 {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizePending, Reason: corev1.PodReasonInfeasible}}
		}
		if r.IntN(6) == 0 {
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: list()}
		}
		got, err := newPodInfo(p, rs, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := resourcesOf(resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{UseStatusResources: true, SkipPodLevelResources: !rs.PodLevelResources}))
		if !reflect.DeepEqual(got.req, want) {
			t.Fatalf("pod %d %+v: requests %+v, PodRequests %+v", i, p, got.req, want)
		}
	}
}
