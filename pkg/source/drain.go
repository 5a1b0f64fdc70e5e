package source

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"github.com/scale-preview/scale-preview/pkg/disruption"
)

// drainPurpose names the drain in permission errors.
const drainPurpose = "predicting a drain"

// DrainKinds are the owner kinds a drain reads (as Cluster.Kinds names
// them), besides nodes, pods, PDBs and PriorityClasses.
var DrainKinds = []string{"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController", "Job"}

// addWorkload keeps the pods' owners (read by the drain).
func (c *Cluster) addWorkload(obj runtime.Object, ns string) {
	w := &c.Workloads
	switch o := obj.(type) {
	case *appsv1.Deployment:
		keepOwner(c, &w.Deployments, o, "Deployment", ns)
	case *appsv1.ReplicaSet:
		keepOwner(c, &w.ReplicaSets, o, "ReplicaSet", ns)
	case *appsv1.StatefulSet:
		keepOwner(c, &w.StatefulSets, o, "StatefulSet", ns)
	case *appsv1.DaemonSet:
		keepOwner(c, &w.DaemonSets, o, "DaemonSet", ns)
	case *corev1.ReplicationController:
		keepOwner(c, &w.ReplicationControllers, o, "ReplicationController", ns)
	case *batchv1.Job:
		keepOwner(c, &w.Jobs, o, "Job", ns)
	}
}

// keepOwner adds o to list, in namespace ns when it names none, and notes
// that the kind was read.
func keepOwner[T metav1.Object](c *Cluster, list *[]T, o T, kind, ns string) {
	if o.GetNamespace() == "" {
		o.SetNamespace(ns)
	}
	c.Kinds[kind] = true
	*list = append(*list, o)
}

// ReadDrainCluster lists what a drain reads: the scheduler's view
// (ReadCluster) and every owner kind, cluster-wide. A forbidden list is an
// error naming the permission.
func ReadDrainCluster(ctx context.Context, client kubernetes.Interface) (*Cluster, error) {
	c, err := ReadCluster(ctx, client)
	var pe *PermissionError
	if errors.As(err, &pe) {
		pe.Purpose = drainPurpose
	}
	if err != nil {
		return nil, err
	}
	for _, k := range DrainKinds {
		c.Kinds[k] = true
	}
	return c, readWorkloads(ctx, client, &c.Workloads)
}

func readWorkloads(ctx context.Context, client kubernetes.Interface, w *disruption.Workloads) error {
	list := func(what string, fn pager.ListPageFunc, each func(runtime.Object)) error {
		p := pager.New(fn)
		p.PageSize = 500
		err := p.EachListItem(ctx, metav1.ListOptions{}, func(o runtime.Object) error { each(o); return nil })
		if apierrors.IsForbidden(err) {
			return &PermissionError{What: what, Err: err, Purpose: drainPurpose}
		}
		return err
	}
	apps, core, batch := client.AppsV1(), client.CoreV1(), client.BatchV1()
	steps := []struct {
		what string
		fn   pager.ListPageFunc
		each func(runtime.Object)
	}{
		{"list deployments.apps in all namespaces (cluster scope)", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return apps.Deployments("").List(ctx, o)
		},
			func(o runtime.Object) { w.Deployments = append(w.Deployments, o.(*appsv1.Deployment)) }},
		{"list replicasets.apps in all namespaces (cluster scope)", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return apps.ReplicaSets("").List(ctx, o)
		},
			func(o runtime.Object) { w.ReplicaSets = append(w.ReplicaSets, o.(*appsv1.ReplicaSet)) }},
		{"list statefulsets.apps in all namespaces (cluster scope)", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return apps.StatefulSets("").List(ctx, o)
		},
			func(o runtime.Object) { w.StatefulSets = append(w.StatefulSets, o.(*appsv1.StatefulSet)) }},
		{"list daemonsets.apps in all namespaces (cluster scope)", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return apps.DaemonSets("").List(ctx, o)
		},
			func(o runtime.Object) { w.DaemonSets = append(w.DaemonSets, o.(*appsv1.DaemonSet)) }},
		{"list replicationcontrollers in all namespaces (cluster scope)", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return core.ReplicationControllers("").List(ctx, o)
		}, func(o runtime.Object) {
			w.ReplicationControllers = append(w.ReplicationControllers, o.(*corev1.ReplicationController))
		}},
		{"list jobs.batch in all namespaces (cluster scope)", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return batch.Jobs("").List(ctx, o)
		},
			func(o runtime.Object) { w.Jobs = append(w.Jobs, o.(*batchv1.Job)) }},
	}
	for _, s := range steps {
		if err := list(s.what, s.fn, s.each); err != nil {
			return err
		}
	}
	return nil
}
