package disruption

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Workloads are the objects that own pods.
type Workloads struct {
	Deployments            []*appsv1.Deployment
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
	DaemonSets             []*appsv1.DaemonSet
	ReplicationControllers []*corev1.ReplicationController
	Jobs                   []*batchv1.Job
}

// Owners indexes Workloads by kind, namespace and name.
type Owners struct {
	objs map[string]metav1.Object
}

func ownerKey(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

// NewOwners indexes w.
func NewOwners(w Workloads) *Owners {
	o := &Owners{objs: map[string]metav1.Object{}}
	indexOwners(o, "Deployment", w.Deployments)
	indexOwners(o, "ReplicaSet", w.ReplicaSets)
	indexOwners(o, "StatefulSet", w.StatefulSets)
	indexOwners(o, "DaemonSet", w.DaemonSets)
	indexOwners(o, "ReplicationController", w.ReplicationControllers)
	indexOwners(o, "Job", w.Jobs)
	return o
}

func indexOwners[T metav1.Object](o *Owners, kind string, list []T) {
	for _, x := range list {
		o.objs[ownerKey(kind, x.GetNamespace(), x.GetName())] = x
	}
}

// Get finds the controller ref's object; nil when absent or another UID.
func (o *Owners) Get(ns string, ref *metav1.OwnerReference) metav1.Object {
	obj := o.objs[ownerKey(ref.Kind, ns, ref.Name)]
	if obj == nil || (ref.UID != "" && obj.GetUID() != ref.UID) {
		return nil
	}
	return obj
}

// Selector is the label selector of the pod controller the ref names
// (ReplicaSet, StatefulSet, ReplicationController), which the scheduler's
// default topology spreading reads; nil when absent or of another kind.
func (o *Owners) Selector(ns string, ref *metav1.OwnerReference) *metav1.LabelSelector {
	switch obj := o.Get(ns, ref).(type) {
	case *appsv1.ReplicaSet:
		return obj.Spec.Selector
	case *appsv1.StatefulSet:
		return obj.Spec.Selector
	case *corev1.ReplicationController:
		if obj.Spec.Selector != nil {
			return &metav1.LabelSelector{MatchLabels: obj.Spec.Selector}
		}
	}
	return nil
}

// ModelledKind: a built-in kind whose objects the snapshot holds.
func ModelledKind(ref *metav1.OwnerReference) bool {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	switch ref.Kind {
	case "ReplicationController":
		return gv.Group == ""
	case "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet":
		return gv.Group == "apps" || gv.Group == "extensions"
	case "Job":
		return gv.Group == "batch"
	}
	return false
}

// ExpectedScale is getExpectedScale: the sum of the distinct controllers'
// spec.replicas, found by the controller's finders (RC, Deployment through
// its ReplicaSet, ReplicaSet, StatefulSet, then any scale subresource).
// unknown is set when the snapshot cannot tell (an owner it does not hold,
// a custom kind that may have a scale subresource).
func (o *Owners) ExpectedScale(pods []*corev1.Pod) (count int32, unknown string, err error) {
	seen := map[types.UID]bool{}
	var missing []string
	for _, p := range pods {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil {
			continue // unmanaged: the controller logs it and goes on
		}
		if seen[ref.UID] {
			continue
		}
		uid, scale, found := o.find(p.Namespace, ref)
		if !found {
			// A Job or DaemonSet that is present has no scale: the
			// controller fails to sync, for certain. Anything else
			// missing may just be missing from the input.
			if !ModelledKind(ref) || (ref.Kind != "Job" && ref.Kind != "DaemonSet") || o.Get(p.Namespace, ref) == nil {
				missing = append(missing, fmt.Sprintf("%s %s/%s", ref.Kind, p.Namespace, ref.Name))
			}
			err = fmt.Errorf("found no controllers for pod %q", p.Name)
			continue
		}
		if !seen[uid] { // a Deployment counts once over all its ReplicaSets
			count += scale
		}
		seen[ref.UID], seen[uid] = true, true
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		unknown = "owners missing from the input: " + strings.Join(slices.Compact(missing), ", ")
	}
	if err != nil {
		return 0, unknown, err
	}
	return count, unknown, nil
}

// find runs the finders in the controller's order.
func (o *Owners) find(ns string, ref *metav1.OwnerReference) (types.UID, int32, bool) {
	switch obj := o.Get(ns, ref).(type) {
	case *corev1.ReplicationController:
		return obj.UID, replicas(obj.Spec.Replicas), true
	case *appsv1.StatefulSet:
		return obj.UID, replicas(obj.Spec.Replicas), true
	case *appsv1.ReplicaSet:
		if dref := metav1.GetControllerOf(obj); dref != nil && dref.Kind == "Deployment" {
			if d, ok := o.Get(ns, dref).(*appsv1.Deployment); ok {
				return d.UID, replicas(d.Spec.Replicas), true
			}
			return "", 0, false
		}
		return obj.UID, replicas(obj.Spec.Replicas), true
	}
	return "", 0, false
}

func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// Finished: the pod succeeded or failed; no controller counts it as active.
func Finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// ActiveWanted is how an owner answers a pod that leaves: a ReplicaSet or
// ReplicationController keeps want active pods (spec.replicas, counted
// true); for any other kind replaces says whether it makes a new pod
// (a Job unless it finished; the rest are their callers' to judge).
func ActiveWanted(owner metav1.Object) (want int32, counted, replaces bool) {
	switch o := owner.(type) {
	case *appsv1.ReplicaSet:
		return replicasOr1(o.Spec.Replicas), true, true
	case *corev1.ReplicationController:
		return replicasOr1(o.Spec.Replicas), true, true
	case *batchv1.Job:
		for _, c := range o.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				return 0, false, false
			}
		}
	}
	return 0, false, true
}

func replicasOr1(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}
