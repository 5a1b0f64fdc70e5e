package drain

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kdrain "k8s.io/kubectl/pkg/drain"
)

// verdict is kubectl's PodDeleteStatus for one pod.
type verdict struct {
	del     bool
	skip    bool   // left on the node without a word, or ignored with a warning
	errMsg  string // a pre-check error: kubectl refuses the node
	warning string
}

// kubectlFilters runs kubectl's own GetPodsForDeletion filters (deleted,
// DaemonSet, mirror, local storage, unreplicated) one pod at a time,
// through a client that serves the pod and the snapshot's DaemonSets.
// The skip-wait-for-delete filter reads the clock, so it is applied here
// with the input's time instead.
type kubectlFilters struct {
	helper *kdrain.Helper
	client *filterClient
	now    time.Time
	opts   Options
}

func newKubectlFilters(in Input) *kubectlFilters {
	ds := in.Workloads.DaemonSets
	if !in.OwnersRead["DaemonSet"] {
		ds = append(slices.Clip(ds), assumedDaemonSets(in.Pods)...)
	}
	c := newFilterClient(ds)
	o := in.Options
	h := &kdrain.Helper{Ctx: context.Background(), Client: c, Force: o.Force, IgnoreAllDaemonSets: o.IgnoreDaemonSets,
		DeleteEmptyDirData: o.DeleteEmptyDirData, GracePeriodSeconds: o.GracePeriodSeconds, Out: io.Discard, ErrOut: io.Discard}
	return &kubectlFilters{helper: h, client: c, now: in.Now, opts: o}
}

// assumedDaemonSets stand in for the DaemonSets the input lacks, so that
// kubectl's filter finds the pods' owners (the answer notes it).
func assumedDaemonSets(pods []*corev1.Pod) []*appsv1.DaemonSet {
	seen := map[string]bool{}
	var out []*appsv1.DaemonSet
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.Kind != "DaemonSet" || seen[p.Namespace+"/"+ref.Name] {
			continue
		}
		seen[p.Namespace+"/"+ref.Name] = true
		out = append(out, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: ref.Name, UID: ref.UID}})
	}
	return out
}

// check is kubectl's verdict for pod p.
func (f *kubectlFilters) check(p *corev1.Pod) verdict {
	if s := f.opts.SkipWaitForDeleteTimeoutSeconds; s > 0 && p.DeletionTimestamp != nil &&
		int(f.now.Sub(p.DeletionTimestamp.Time).Seconds()) > s {
		return verdict{skip: true, warning: fmt.Sprintf("its deletionTimestamp is older than --skip-wait-for-delete-timeout=%d", s)}
	}
	f.client.current = p
	list, errs := f.helper.GetPodsForDeletion(p.Spec.NodeName)
	if len(errs) > 0 {
		msgs := make([]string, 0, len(errs))
		for _, e := range errs {
			msgs = append(msgs, strings.TrimPrefix(e.Error(), "cannot delete "))
		}
		slices.Sort(msgs)
		return verdict{errMsg: podlessMessage(strings.Join(msgs, "; "))}
	}
	if list == nil {
		return verdict{skip: true}
	}
	w := podlessMessage(list.Warnings())
	if len(list.Pods()) == 1 {
		return verdict{del: true, warning: w}
	}
	return verdict{skip: true, warning: w}
}

// podlessMessage drops the ": ns/name" kubectl appends to each message.
func podlessMessage(msg string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[:i]
	}
	return msg
}

// skipRule names why kubectl leaves a pod, for the WHY column.
func skipRule(p *corev1.Pod, v verdict) string {
	switch {
	case v.warning != "":
		return v.warning
	case hasKey(p.Annotations, corev1.MirrorPodAnnotationKey):
		return "mirror pod: the kubelet owns it"
	}
	return "kubectl's filters skip it"
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
