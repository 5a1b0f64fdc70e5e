package source

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/pager"

	"github.com/scale-preview/scale-preview/pkg/disruption"
)

// Cluster is what the scheduler reads for one preemption: every node, pod,
// PodDisruptionBudget and PriorityClass (and namespaces when readable).
type Cluster struct {
	Nodes           []*corev1.Node
	Pods            []*corev1.Pod
	PDBs            []*policyv1.PodDisruptionBudget
	PriorityClasses []*schedulingv1.PriorityClass
	Namespaces      []*corev1.Namespace // nil when not read
	// Workloads are the pods' owners; only the drain reads them.
	Workloads disruption.Workloads
	// Kinds says which kinds the files held, so that a missing node list
	// can be told from an empty one.
	Kinds map[string]bool
	Notes []string
}

// ReadClusterFiles reads nodes, pods, PDBs, PriorityClasses and namespaces
// from files (lists allowed); other kinds are ignored.
func ReadClusterFiles(names []string, stdin io.Reader, defaultNamespace string) (*Cluster, error) {
	c := &Cluster{Kinds: map[string]bool{}}
	seen := map[string]bool{}
	for _, name := range names {
		display := displayName(name)
		var data []byte
		var err error
		if name == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, &FileError{Name: display, Err: err}
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, &FileError{Name: display, Err: fmt.Errorf("it is empty")}
		}
		infos, err := resource.NewLocalBuilder().Unstructured().Stream(bytes.NewReader(data), display).Flatten().Do().Infos()
		if err != nil {
			return nil, &FileError{Name: display, Err: err}
		}
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
			key := gvk.Kind + " " + info.Namespace + "/" + info.Name
			if seen[key] {
				return nil, &FileError{Name: display, Err: fmt.Errorf("%s appears twice", key)}
			}
			seen[key] = true
			c.add(typed, defaultNamespace)
		}
	}
	return c, nil
}

func (c *Cluster) add(obj runtime.Object, ns string) {
	switch o := obj.(type) {
	case *corev1.Node:
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
	if err := list("list nodes (cluster scope)", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Nodes().List(ctx, o)
	}, func(o runtime.Object) { c.Nodes = append(c.Nodes, o.(*corev1.Node)) }); err != nil {
		return nil, err
	}
	if err := list("list pods in all namespaces (cluster scope)", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Pods("").List(ctx, o)
	}, func(o runtime.Object) { c.Pods = append(c.Pods, o.(*corev1.Pod)) }); err != nil {
		return nil, err
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
	err := list("list namespaces", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
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
