package source

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// pageSize keeps each list request small enough not to time out on huge
// namespaces.
const pageSize = 500

// maxReads bounds how often Load starts over when the target changes
// while it is being read.
const maxReads = 3

// Live reads from a cluster. It only issues get and list requests.
type Live struct {
	Client kubernetes.Interface
	// Kubelet reaches kubelets directly (node/NAME); nil: the node proxy only.
	Kubelet *KubeletAccess
}

// Load reads the target and everything its controller looks at. The lists
// are separate requests, so the target is read again at the end: if its
// resourceVersion moved (a scale, a rollout step, a status update), the
// lists may mix two moments and everything is read again, at most maxReads
// times; after that the snapshot says it is unsettled.
func (l *Live) Load(ctx context.Context, ref snapshot.Ref) (*snapshot.Snapshot, error) {
	if ref.Kind == snapshot.HorizontalPodAutoscaler {
		return l.loadAutoscaler(ctx, ref)
	}
	for attempt := 1; ; attempt++ {
		s, before, err := l.read(ctx, ref)
		if err != nil {
			return nil, err
		}
		t, err := l.getTarget(ctx, ref)
		if err != nil {
			return nil, err
		}
		after := t.rv
		if after == before {
			return s, nil
		}
		if attempt == maxReads {
			s.Unsettled = append(s.Unsettled, fmt.Sprintf("%s %s changed while it was read, %d times in a row (resourceVersion %s -> %s): its controller is busy; predict again when it settles", ref.Kind, ref.Name, maxReads, before, after))
			return s, nil
		}
	}
}

// target is the scaled object as read, and what else must be listed.
type target struct {
	rv       string
	selector labels.Selector
	// serverSelector is sent with the pod list (narrowed on the client).
	serverSelector         string
	wantRS, wantRC, claims bool
	put                    func(*snapshot.Snapshot)
}

// read takes one snapshot and returns it with the target's resourceVersion.
func (l *Live) read(ctx context.Context, ref snapshot.Ref) (*snapshot.Snapshot, string, error) {
	t, err := l.getTarget(ctx, ref)
	if err != nil {
		return nil, "", err
	}
	s := &snapshot.Snapshot{}
	t.put(s)
	var mu sync.Mutex // guards s.Notes and the optional fields
	g, gctx := errgroup.WithContext(ctx)
	if t.wantRS {
		g.Go(func() error { return l.replicaSets(gctx, ref, s) })
	}
	if t.wantRC {
		g.Go(func() error { return l.replicationControllers(gctx, ref.Namespace, s) })
	}
	if t.claims {
		g.Go(func() error { l.claims(gctx, ref.Namespace, s, &mu); return nil })
	}
	g.Go(func() error { return l.pods(gctx, ref.Namespace, t.serverSelector, s) })
	for _, o := range l.optional(ref.Namespace, s, &mu) {
		g.Go(func() error {
			if err := o.read(gctx); err != nil && gctx.Err() == nil {
				mu.Lock()
				s.Notes = append(s.Notes, o.what+" could not be read ("+reason(err)+"): "+o.lost)
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, "", err
	}
	if ref.Kind == snapshot.ReplicaSet && t.wantRS && !containsRS(s.ReplicaSets, ref.Name) {
		return nil, "", apierrors.NewNotFound(appsv1.Resource("replicasets"), ref.Name)
	}
	return s, t.rv, nil
}

// getTarget reads the scaled object and decides what else to list.
func (l *Live) getTarget(ctx context.Context, ref snapshot.Ref) (*target, error) {
	ns, apps := ref.Namespace, l.Client.AppsV1()
	var t *target
	var sel *metav1.LabelSelector
	var kind string
	switch ref.Kind {
	case snapshot.Deployment:
		d, err := apps.Deployments(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		strip(&d.ObjectMeta)
		t = &target{rv: d.ResourceVersion, wantRS: true, put: func(s *snapshot.Snapshot) { s.Deployments = append(s.Deployments, d) }}
		sel, kind = d.Spec.Selector, "deployment"
	case snapshot.ReplicaSet:
		rs, err := apps.ReplicaSets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		strip(&rs.ObjectMeta)
		// Siblings' pods count toward ranks: list them all, then narrow.
		t = &target{rv: rs.ResourceVersion, wantRS: metav1.GetControllerOf(rs) != nil, put: func(s *snapshot.Snapshot) { s.ReplicaSets = append(s.ReplicaSets, rs) }}
		sel, kind = rs.Spec.Selector, "replicaset"
		if t.wantRS {
			// The siblings' selectors differ (pod-template-hash): list by
			// what they share.
			t.serverSelector = sharedLabels(rs)
		}
	case snapshot.ReplicationController:
		rc, err := l.Client.CoreV1().ReplicationControllers(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		strip(&rc.ObjectMeta)
		t = &target{rv: rc.ResourceVersion, selector: labels.SelectorFromSet(rc.Spec.Selector), wantRC: metav1.GetControllerOf(rc) != nil,
			put: func(s *snapshot.Snapshot) { s.ReplicationControllers = append(s.ReplicationControllers, rc) }}
		t.serverSelector = t.selector.String()
		if t.wantRC {
			// Sibling RCs (1.21-1.23 ranks) share no label we can rely on.
			t.serverSelector = ""
		}
		return t, nil
	case snapshot.StatefulSet:
		st, err := apps.StatefulSets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		strip(&st.ObjectMeta)
		t = &target{rv: st.ResourceVersion, claims: true, put: func(s *snapshot.Snapshot) { s.StatefulSets = append(s.StatefulSets, st) }}
		sel, kind = st.Spec.Selector, "statefulset"
	case snapshot.Job:
		var err error
		if t, sel, err = l.jobTarget(ctx, ref); err != nil {
			return nil, err
		}
		kind = "job"
	default:
		return nil, fmt.Errorf("unsupported kind %s", ref.Kind)
	}
	var err error
	if t.selector, err = metav1.LabelSelectorAsSelector(sel); err != nil {
		return nil, fmt.Errorf("%s %s has an invalid selector: %v", kind, ref.Name, err)
	}
	if t.serverSelector == "" && (ref.Kind != snapshot.ReplicaSet || !t.wantRS) {
		t.serverSelector = t.selector.String()
	}
	return t, nil
}

// replicaSets lists the namespace's ReplicaSets; the listed copy of the
// target replaces the one read first.
func (l *Live) replicaSets(ctx context.Context, ref snapshot.Ref, s *snapshot.Snapshot) error {
	list, err := listAs(ctx, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return l.Client.AppsV1().ReplicaSets(ref.Namespace).List(ctx, o)
	}, func(rs *appsv1.ReplicaSet) { strip(&rs.ObjectMeta) })
	if err == nil {
		s.ReplicaSets = list
	}
	return err
}

func (l *Live) replicationControllers(ctx context.Context, ns string, s *snapshot.Snapshot) error {
	list, err := listAs(ctx, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return l.Client.CoreV1().ReplicationControllers(ns).List(ctx, o)
	}, func(rc *corev1.ReplicationController) { strip(&rc.ObjectMeta) })
	if err == nil {
		s.ReplicationControllers = list
	}
	return err
}

// claims reads the PersistentVolumeClaims; they only inform, so a failure
// becomes a note and the claims are then named but unchecked.
func (l *Live) claims(ctx context.Context, ns string, s *snapshot.Snapshot, mu *sync.Mutex) {
	list, err := listAs(ctx, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return l.Client.CoreV1().PersistentVolumeClaims(ns).List(ctx, o)
	}, func(c *corev1.PersistentVolumeClaim) { strip(&c.ObjectMeta) })
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.Notes = append(s.Notes, "persistentvolumeclaims could not be read ("+reason(err)+"): claim deletions are predicted by name only")
		}
		return
	}
	s.ClaimsKnown, s.Claims = true, list
}

func (l *Live) pods(ctx context.Context, ns, selector string, s *snapshot.Snapshot) error {
	list, err := listAs(ctx, metav1.ListOptions{LabelSelector: selector}, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return l.Client.CoreV1().Pods(ns).List(ctx, o)
	}, trimPod) // keeps what the prediction reads
	if err == nil {
		s.Pods = list
	}
	return err
}

// optionalRead is a read for the runbook answers: a failure loses only
// what lost says.
type optionalRead struct {
	what, lost string
	read       func(context.Context) error
}

func (l *Live) optional(ns string, s *snapshot.Snapshot, mu *sync.Mutex) []optionalRead {
	return []optionalRead{
		{"horizontalpodautoscalers", "an autoscaler that would undo the scale is not checked", func(ctx context.Context) error {
			list, err := l.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				appendLocked(mu, &s.HPAs, list.Items)
			}
			return err
		}},
		{"poddisruptionbudgets", "budgets are not checked", func(ctx context.Context) error {
			list, err := l.Client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				appendLocked(mu, &s.PDBs, list.Items)
			}
			return err
		}},
		{"nodes", "no per-zone impact", func(ctx context.Context) error {
			var nodes []*corev1.Node
			err := listPaged(ctx, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return l.Client.CoreV1().Nodes().List(ctx, o)
			}, func() { nodes = nodes[:0] }, func(obj runtime.Object) {
				n := obj.(*corev1.Node)
				// Only the zone label is used.
				nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{"topology.kubernetes.io/zone": n.Labels["topology.kubernetes.io/zone"]}}})
			})
			if err == nil {
				mu.Lock()
				defer mu.Unlock()
				s.Nodes = nodes
			}
			return err
		}},
	}
}

// appendLocked adds pointers to items to *dst under mu.
func appendLocked[T any](mu *sync.Mutex, dst *[]*T, items []T) {
	mu.Lock()
	defer mu.Unlock()
	for i := range items {
		*dst = append(*dst, &items[i])
	}
}

// listPaged lists in pages of pageSize and hands each item to each as its
// page arrives, so that only a page or two is held whole (the next page is
// fetched while this one is handled). Like client-go's pager, it falls back
// to one full list when a continue token expires (410 Gone); the items
// already handed over are then handed over again, after reset.
func listPaged(ctx context.Context, opts metav1.ListOptions, page pager.ListPageFunc, reset func(), each func(runtime.Object)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		list    runtime.Object
		err     error
		restart bool // the full list follows: drop what came before
	}
	pages := make(chan result, 1)
	go func() {
		defer close(pages)
		o := opts
		o.Limit = pageSize
		for {
			list, err := page(ctx, o)
			restart := false
			if err != nil && apierrors.IsResourceExpired(err) && o.Continue != "" {
				list, err = page(ctx, opts) // the full list, as the pager does
				o.Continue, restart = "", true
			} else if err == nil {
				var m metav1.ListInterface
				if m, err = meta.ListAccessor(list); err == nil {
					o.Continue = m.GetContinue()
				}
			}
			select {
			case pages <- result{list, err, restart}:
			case <-ctx.Done():
				return
			}
			if err != nil || o.Continue == "" {
				return
			}
		}
	}()
	for r := range pages {
		if r.err != nil {
			return r.err
		}
		if r.restart {
			reset()
		}
		if err := meta.EachListItem(r.list, func(obj runtime.Object) error {
			each(obj)
			return nil
		}); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// listAs is listPaged for one item type: each item goes through trim
// (what the prediction never reads is dropped) and is kept as a copy of
// its own, so that no page's item array stays alive.
func listAs[T any](ctx context.Context, opts metav1.ListOptions, page pager.ListPageFunc, trim func(*T)) ([]*T, error) {
	var out []*T
	err := listPaged(ctx, opts, page, func() { out = out[:0] }, func(obj runtime.Object) {
		x := any(obj).(*T)
		trim(x)
		c := new(T)
		*c = *x
		out = append(out, c)
	})
	return out, err
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

// strip drops what the prediction never reads, to keep memory linear and small.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

func strip(m *metav1.ObjectMeta) {
	m.ManagedFields = nil
	delete(m.Annotations, lastApplied)
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
	s.HPAs = slices.DeleteFunc(s.HPAs, func(x *autoscalingv2.HorizontalPodAutoscaler) bool { return x.Name == h.Name })
	s.HPAs = append(s.HPAs, h)
	return s, nil
}

// costField is the deletion-cost annotation as managedFields name it.
const costField = `"f:` + engine.DeletionCostAnnotation + `"`

// costManagers keeps the managedFields entries that own the
// pod-deletion-cost annotation: they tell who would overwrite steering.
func costManagers(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.FieldsV1 != nil && bytes.Contains(e.FieldsV1.GetRawBytes(), []byte(costField)) {
			out = append(out, e)
		}
	}
	return out
}
