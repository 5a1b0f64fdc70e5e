package source

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// pageSize keeps each list request small enough not to time out on huge
// namespaces.
const pageSize = 500

// Live reads from a cluster. It only issues get and list requests.
type Live struct {
	Client kubernetes.Interface
}

// Load reads the target and everything its controller looks at.
func (l *Live) Load(ctx context.Context, ref snapshot.Ref) (*snapshot.Snapshot, error) {
	if ref.Kind == snapshot.HorizontalPodAutoscaler {
		return l.loadAutoscaler(ctx, ref)
	}
	s := &snapshot.Snapshot{}
	ns := ref.Namespace
	apps := l.Client.AppsV1()
	var podSelector labels.Selector
	var wantRS, wantRC, wantClaims bool
	switch ref.Kind {
	case snapshot.Deployment:
		d, err := apps.Deployments(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		strip(&d.ObjectMeta)
		s.Deployments = append(s.Deployments, d)
		if podSelector, err = metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil {
			return nil, fmt.Errorf("deployment %s has an invalid selector: %v", d.Name, err)
		}
		wantRS = true
	case snapshot.ReplicaSet:
		rs, err := apps.ReplicaSets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		strip(&rs.ObjectMeta)
		s.ReplicaSets = append(s.ReplicaSets, rs)
		if podSelector, err = metav1.LabelSelectorAsSelector(rs.Spec.Selector); err != nil {
			return nil, fmt.Errorf("replicaset %s has an invalid selector: %v", rs.Name, err)
		}
		if metav1.GetControllerOf(rs) != nil {
			// Siblings' pods count toward ranks: list them all, then narrow.
			wantRS = true
		}
	case snapshot.ReplicationController:
		rc, err := l.Client.CoreV1().ReplicationControllers(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		strip(&rc.ObjectMeta)
		s.ReplicationControllers = append(s.ReplicationControllers, rc)
		podSelector = labels.SelectorFromSet(rc.Spec.Selector)
		wantRC = metav1.GetControllerOf(rc) != nil
	case snapshot.StatefulSet:
		st, err := apps.StatefulSets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		strip(&st.ObjectMeta)
		s.StatefulSets = append(s.StatefulSets, st)
		if podSelector, err = metav1.LabelSelectorAsSelector(st.Spec.Selector); err != nil {
			return nil, fmt.Errorf("statefulset %s has an invalid selector: %v", st.Name, err)
		}
		wantClaims = true
	default:
		return nil, fmt.Errorf("unsupported kind %s", ref.Kind)
	}

	// Independent lists run concurrently.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	var rsList []*appsv1.ReplicaSet
	if wantRS {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := listAll(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return apps.ReplicaSets(ns).List(ctx, o)
			}, metav1.ListOptions{}, func(obj runtime.Object) {
				for i := range obj.(*appsv1.ReplicaSetList).Items {
					rs := &obj.(*appsv1.ReplicaSetList).Items[i]
					strip(&rs.ObjectMeta)
					rsList = append(rsList, rs)
				}
			})
			if err != nil {
				fail(err)
			}
		}()
	}
	if wantRC {
		wg.Add(1)
		go func() {
			defer wg.Done()
			list, err := l.Client.CoreV1().ReplicationControllers(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				fail(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			s.ReplicationControllers = s.ReplicationControllers[:0]
			for i := range list.Items {
				strip(&list.Items[i].ObjectMeta)
				s.ReplicationControllers = append(s.ReplicationControllers, &list.Items[i])
			}
		}()
	}
	if wantClaims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			list, err := l.Client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				// Claims only inform; the prediction goes on without them.
				s.Notes = append(s.Notes, "persistentvolumeclaims could not be read ("+reason(err)+"): claim deletions are predicted by name only")
				return
			}
			s.ClaimsKnown = true
			for i := range list.Items {
				strip(&list.Items[i].ObjectMeta)
				s.Claims = append(s.Claims, &list.Items[i])
			}
		}()
	}
	// Optional reads for the runbook answers: each degrades to a note.
	optional := func(what string, list func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := list(); err != nil {
				mu.Lock()
				s.Notes = append(s.Notes, what+" could not be read ("+reason(err)+"): "+noteFor(what))
				mu.Unlock()
			}
		}()
	}
	optional("horizontalpodautoscalers", func() error {
		list, err := l.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			mu.Lock()
			for i := range list.Items {
				s.HPAs = append(s.HPAs, &list.Items[i])
			}
			mu.Unlock()
		}
		return err
	})
	optional("poddisruptionbudgets", func() error {
		list, err := l.Client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			mu.Lock()
			for i := range list.Items {
				s.PDBs = append(s.PDBs, &list.Items[i])
			}
			mu.Unlock()
		}
		return err
	})
	optional("nodes", func() error {
		var nodes []*corev1.Node
		err := listAll(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return l.Client.CoreV1().Nodes().List(ctx, o)
		}, metav1.ListOptions{}, func(obj runtime.Object) {
			items := obj.(*corev1.NodeList).Items
			for i := range items {
				n := &items[i]
				// Only the zone label is used.
				nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{"topology.kubernetes.io/zone": n.Labels["topology.kubernetes.io/zone"]}}})
			}
		})
		if err == nil {
			mu.Lock()
			s.Nodes = nodes
			mu.Unlock()
		}
		return err
	})
	// Pods: a server-side selector. For a ReplicaSet with siblings, the
	// siblings' selectors differ (pod-template-hash), so list by what they
	// share and narrow on the client once the ReplicaSets are in.
	serverSelector := podSelector.String()
	switch {
	case ref.Kind == snapshot.ReplicaSet && wantRS:
		serverSelector = sharedLabels(s.ReplicaSets[0])
	case wantRC:
		// Sibling RCs (1.21-1.23 ranks) share no label we can rely on.
		serverSelector = ""
	}
	var pods []*corev1.Pod
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := listAll(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return l.Client.CoreV1().Pods(ns).List(ctx, o)
		}, metav1.ListOptions{LabelSelector: serverSelector}, func(obj runtime.Object) {
			items := obj.(*corev1.PodList).Items
			for i := range items {
				costOwners := costManagers(items[i].ManagedFields)
				strip(&items[i].ObjectMeta)
				items[i].ManagedFields = costOwners
				items[i].Spec.Volumes = nil // large and unused
				pods = append(pods, &items[i])
			}
		})
		if err != nil {
			fail(err)
		}
	}()
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if wantRS {
		s.ReplicaSets = rsList
		if ref.Kind == snapshot.ReplicaSet && !containsRS(rsList, ref.Name) {
			return nil, apierrors.NewNotFound(appsv1.Resource("replicasets"), ref.Name)
		}
	}
	s.Pods = pods
	return s, nil
}

// sharedLabels is the part of rs's selector that every ReplicaSet of the
// same Deployment shares: its matchLabels without pod-template-hash.
func sharedLabels(rs *appsv1.ReplicaSet) string {
	if rs.Spec.Selector == nil || len(rs.Spec.Selector.MatchExpressions) > 0 {
		return ""
	}
	var parts []string
	for k, v := range rs.Spec.Selector.MatchLabels {
		if k != appsv1.DefaultDeploymentUniqueLabelKey {
			parts = append(parts, k+"="+v)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func containsRS(list []*appsv1.ReplicaSet, name string) bool {
	for _, rs := range list {
		if rs.Name == name {
			return true
		}
	}
	return false
}

// listAll pages through a list with limit/continue, one page at a time.
func listAll(ctx context.Context, fn func(context.Context, metav1.ListOptions) (runtime.Object, error), opts metav1.ListOptions, each func(runtime.Object)) error {
	opts.Limit = pageSize
	for {
		obj, err := fn(ctx, opts)
		if err != nil {
			return err
		}
		each(obj)
		lm, err := meta.ListAccessor(obj)
		if err != nil {
			return err
		}
		if lm.GetContinue() == "" {
			return nil
		}
		opts.Continue = lm.GetContinue()
	}
}

// strip drops what the prediction never reads, to keep memory linear and small.
func strip(m *metav1.ObjectMeta) {
	m.ManagedFields = nil
	delete(m.Annotations, "kubectl.kubernetes.io/last-applied-configuration")
}

func noteFor(what string) string {
	switch what {
	case "nodes":
		return "no per-zone impact"
	case "horizontalpodautoscalers":
		return "an autoscaler that would undo the scale is not checked"
	case "poddisruptionbudgets":
		return "budgets are not checked"
	}
	return "skipped"
}

func reason(err error) string {
	if apierrors.IsForbidden(err) {
		return "forbidden"
	}
	return err.Error()
}

// loadAutoscaler reads the autoscaler and everything its target's
// prediction needs.
func (l *Live) loadAutoscaler(ctx context.Context, ref snapshot.Ref) (*snapshot.Snapshot, error) {
	h, err := l.Client.AutoscalingV2().HorizontalPodAutoscalers(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	strip(&h.ObjectMeta)
	target, ok := snapshot.AutoscalerTarget(h)
	if !ok {
		// The workload model reports the unsupported target.
		return &snapshot.Snapshot{HPAs: []*autoscalingv2.HorizontalPodAutoscaler{h}}, nil
	}
	s, err := l.Load(ctx, target)
	if err != nil {
		return nil, err
	}
	for i, x := range s.HPAs {
		if x.Name == h.Name {
			s.HPAs = append(s.HPAs[:i], s.HPAs[i+1:]...)
			break
		}
	}
	s.HPAs = append(s.HPAs, h)
	return s, nil
}

// costField is the deletion-cost annotation as managedFields name it.
const costField = `"f:controller.kubernetes.io/pod-deletion-cost"`

// costManagers keeps the managedFields entries that own the
// pod-deletion-cost annotation: they tell who would overwrite steering.
func costManagers(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.FieldsV1 != nil && bytes.Contains(e.FieldsV1.Raw, []byte(costField)) {
			out = append(out, e)
		}
	}
	return out
}
