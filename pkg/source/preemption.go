package source

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/pager"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// Cluster is what the scheduler reads for one preemption: every node, pod,
// PodDisruptionBudget and PriorityClass (and namespaces when readable).
type Cluster struct {
	Nodes           []*corev1.Node
	Pods            []*corev1.Pod
	PDBs            []*policyv1.PodDisruptionBudget
	PriorityClasses []*schedulingv1.PriorityClass
	Namespaces      []*corev1.Namespace // nil when not read
	// Quotas are the ResourceQuotas in the files (a rollout reads them).
	Quotas []*corev1.ResourceQuota
	// Workloads are the pods' owners; only the drain reads them.
	Workloads disruption.Workloads
	// Kinds says which kinds the files held, so that a missing node list
	// can be told from an empty one.
	Kinds map[string]bool
	Notes []string
	// Revisions are the ControllerRevisions in the files (a DaemonSet's
	// rollout reads them).
	Revisions []*appsv1.ControllerRevision
}

// ReadClusterFiles reads nodes, pods, PDBs, PriorityClasses and namespaces
// from files (lists allowed); other kinds are ignored. Each file is
// streamed when it is as kubectl prints it (see streamRead), bound pods
// trimmed to what the scheduler and a drain read (trimForScheduler);
// anything else, and every error, goes to kubectl's resource builder.
func ReadClusterFiles(names []string, stdin io.Reader, defaultNamespace string) (*Cluster, error) {
	c := &Cluster{Kinds: map[string]bool{}}
	seen := map[string]bool{}
	for _, name := range names {
		display := displayName(name)
		one, err := readClusterFile(name, stdin, defaultNamespace)
		if err != nil {
			return nil, err
		}
		if err := c.merge(one, seen); err != nil {
			return nil, &FileError{Name: display, Err: err}
		}
	}
	return c, nil
}

// readClusterFile reads one file, streamed when it can be.
func readClusterFile(name string, stdin io.Reader, defaultNamespace string) (*Cluster, error) {
	display := displayName(name)
	var data []byte
	var r io.Reader
	if name == "-" {
		var err error
		if data, err = io.ReadAll(stdin); err != nil {
			return nil, &FileError{Name: display, Err: err}
		}
		r = bytes.NewReader(data)
	} else if f, err := os.Open(name); err == nil {
		defer f.Close()
		r = f
	}
	if r != nil {
		// An empty result may be an empty file, which the general reader
		// words.
		if c, err := streamCluster(r, defaultNamespace); err == nil && len(c.Kinds) > 0 {
			return c, nil
		}
	}
	if name != "-" {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			return nil, &FileError{Name: display, Err: err}
		}
	}
	return readClusterGeneral(display, data, defaultNamespace)
}

// streamCluster is the streaming reader with the scheduler's trim; any
// error sends the file to the general reader, which words it.
func streamCluster(r io.Reader, defaultNamespace string) (*Cluster, error) {
	c := &Cluster{Kinds: map[string]bool{}}
	st := &streamer{s: &snapshot.Snapshot{}, ns: defaultNamespace, trim: trimForScheduler}
	st.other = func(u *unstructured.Unstructured) error {
		typed, ok, err := typedClusterObject(u)
		if err != nil || !ok {
			return err
		}
		if clusterScoped(u.GetKind()) {
			typed.(metav1.Object).SetNamespace("")
		}
		c.add(typed, defaultNamespace)
		return nil
	}
	s, err := st.read(r)
	if err != nil {
		return nil, err
	}
	if len(s.Pods) > 0 {
		c.Pods, c.Kinds["Pod"] = s.Pods, true
	}
	return c, nil
}

// typedClusterObject converts u to its typed object, as the general
// reader does every kind client-go knows (ok false for any other kind).
func typedClusterObject(u *unstructured.Unstructured) (runtime.Object, bool, error) {
	gvk := u.GroupVersionKind()
	typed, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, false, nil // a version the scheduler does not read here
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), typed); err != nil {
		return nil, false, fmt.Errorf("%s %s: %w", gvk.Kind, u.GetName(), err)
	}
	return typed, true, nil
}

func clusterScoped(kind string) bool {
	return kind == "Node" || kind == "PriorityClass" || kind == "Namespace"
}

// readClusterGeneral is the general reader: the whole input through
// kubectl's resource builder.
func readClusterGeneral(display string, data []byte, defaultNamespace string) (*Cluster, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FileError{Name: display, Err: fmt.Errorf("it is empty")}
	}
	infos, err := resource.NewLocalBuilder().Unstructured().Stream(bytes.NewReader(data), display).Flatten().Do().Infos()
	if err != nil {
		return nil, &FileError{Name: display, Err: err}
	}
	c := &Cluster{Kinds: map[string]bool{}}
	for _, info := range infos {
		gvk := info.Object.GetObjectKind().GroupVersionKind()
		typed, err := scheme.Scheme.New(gvk)
		if err != nil {
			continue // a kind the scheduler does not read here
		}
		u, ok := info.Object.(runtime.Unstructured)
		if !ok {
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), typed); err != nil {
			return nil, &FileError{Name: display, Err: fmt.Errorf("%s %s: %w", gvk.Kind, info.Name, err)}
		}
		if p, ok := typed.(*corev1.Pod); ok {
			trimForScheduler(p)
		}
		c.add(typed, defaultNamespace)
	}
	return c, nil
}

// merge adds one file's objects to c; an object given twice is an error.
func (c *Cluster) merge(one *Cluster, seen map[string]bool) error {
	var err error
	note := func(kind string, o metav1.Object) {
		key := kind + " " + o.GetNamespace() + "/" + o.GetName()
		if seen[key] && err == nil {
			err = fmt.Errorf("%s appears twice", key)
		}
		seen[key] = true
	}
	c.Nodes = appendAll(c.Nodes, one.Nodes, "Node", note)
	c.Pods = appendAll(c.Pods, one.Pods, "Pod", note)
	c.PDBs = appendAll(c.PDBs, one.PDBs, "PodDisruptionBudget", note)
	c.PriorityClasses = appendAll(c.PriorityClasses, one.PriorityClasses, "PriorityClass", note)
	c.Quotas = appendAll(c.Quotas, one.Quotas, "ResourceQuota", note)
	c.Revisions = appendAll(c.Revisions, one.Revisions, "ControllerRevision", note)
	if one.Namespaces != nil {
		c.Namespaces = appendAll(c.Namespaces, one.Namespaces, "Namespace", note)
	}
	w, o := &c.Workloads, &one.Workloads
	w.Deployments = appendAll(w.Deployments, o.Deployments, "Deployment", note)
	w.ReplicaSets = appendAll(w.ReplicaSets, o.ReplicaSets, "ReplicaSet", note)
	w.StatefulSets = appendAll(w.StatefulSets, o.StatefulSets, "StatefulSet", note)
	w.DaemonSets = appendAll(w.DaemonSets, o.DaemonSets, "DaemonSet", note)
	w.ReplicationControllers = appendAll(w.ReplicationControllers, o.ReplicationControllers, "ReplicationController", note)
	w.Jobs = appendAll(w.Jobs, o.Jobs, "Job", note)
	for k := range one.Kinds {
		c.Kinds[k] = true
	}
	return err
}

func (c *Cluster) add(obj runtime.Object, ns string) {
	switch o := obj.(type) {
	case *corev1.Node:
		trimNode(o)
		c.Nodes, c.Kinds["Node"] = append(c.Nodes, o), true
	case *corev1.Pod:
		if o.Namespace == "" {
			o.Namespace = ns
		}
		c.Pods, c.Kinds["Pod"] = append(c.Pods, o), true
	case *policyv1.PodDisruptionBudget:
		if o.Namespace == "" {
			o.Namespace = ns
		}
		c.PDBs, c.Kinds["PodDisruptionBudget"] = append(c.PDBs, o), true
	case *schedulingv1.PriorityClass:
		c.PriorityClasses, c.Kinds["PriorityClass"] = append(c.PriorityClasses, o), true
	case *corev1.Namespace:
		c.Namespaces, c.Kinds["Namespace"] = append(c.Namespaces, o), true
	case *corev1.ResourceQuota:
		if o.Namespace == "" {
			o.Namespace = ns
		}
		c.Quotas, c.Kinds["ResourceQuota"] = append(c.Quotas, o), true
	case *appsv1.ControllerRevision:
		if o.Namespace == "" {
			o.Namespace = ns
		}
		c.Revisions, c.Kinds["ControllerRevision"] = append(c.Revisions, o), true
	default:
		c.addWorkload(obj, ns)
	}
}

// PermissionError names the read the scheduler's view needs and RBAC
// denied.
type PermissionError struct {
	What string
	Err  error
	// Purpose is what needs the read; "" is preemption.
	Purpose string
}

func (e *PermissionError) Error() string {
	purpose := e.Purpose
	if purpose == "" {
		purpose = "predicting preemption"
	}
	return fmt.Sprintf("%s is forbidden (%v): %s needs %s", e.What, e.Err, purpose, e.What)
}
func (e *PermissionError) Unwrap() error { return e.Err }

// ReadCluster lists what the scheduler sees, cluster-wide. A forbidden
// list of nodes, pods, PDBs or PriorityClasses (priorities decide who may
// be a victim) is an error naming the permission; forbidden namespaces only
// leave affinity's namespace selectors unevaluated, which a note says.
func ReadCluster(ctx context.Context, client kubernetes.Interface) (*Cluster, error) {
	c := &Cluster{Kinds: map[string]bool{"Node": true, "Pod": true, "PodDisruptionBudget": true, "PriorityClass": true}}
	list := func(what string, fn pager.ListPageFunc, each func(runtime.Object)) error {
		p := pager.New(fn)
		p.PageSize = 500
		err := p.EachListItem(ctx, metav1.ListOptions{}, func(o runtime.Object) error { each(o); return nil })
		if apierrors.IsForbidden(err) {
			return &PermissionError{What: what, Err: err}
		}
		return err
	}
	forbidden := func(what string, err error) error {
		if apierrors.IsForbidden(err) {
			return &PermissionError{What: what, Err: err}
		}
		return err
	}
	var err error
	// Nodes and pods are trimmed page by page (about two pages are held
	// whole at a time), as the scale-in's live reader does.
	if c.Nodes, err = listAs(ctx, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Nodes().List(ctx, o)
	}, trimNode); err != nil {
		return nil, forbidden("list nodes (cluster scope)", err)
	}
	if c.Pods, err = listAs(ctx, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Pods("").List(ctx, o)
	}, trimForScheduler); err != nil {
		return nil, forbidden("list pods in all namespaces (cluster scope)", err)
	}
	if err := list("list poddisruptionbudgets.policy in all namespaces (cluster scope)", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return client.PolicyV1().PodDisruptionBudgets("").List(ctx, o)
	}, func(o runtime.Object) { c.PDBs = append(c.PDBs, o.(*policyv1.PodDisruptionBudget)) }); err != nil {
		return nil, err
	}
	if err := list("list priorityclasses.scheduling.k8s.io", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return client.SchedulingV1().PriorityClasses().List(ctx, o)
	}, func(o runtime.Object) { c.PriorityClasses = append(c.PriorityClasses, o.(*schedulingv1.PriorityClass)) }); err != nil {
		return nil, err
	}
	var nss []*corev1.Namespace
	err = list("list namespaces", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Namespaces().List(ctx, o)
	}, func(o runtime.Object) { nss = append(nss, o.(*corev1.Namespace)) })
	switch {
	case err == nil:
		c.Namespaces = nss
	case strings.Contains(err.Error(), "forbidden"):
		c.Notes = append(c.Notes, "namespaces could not be listed: namespaceSelectors in inter-pod affinity are not evaluated")
	default:
		return nil, err
	}
	return c, nil
}
