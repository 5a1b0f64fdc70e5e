package rollout

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// quota is one ResourceQuota of the Deployment's namespace as the
// admission plugin checks a new pod against it: used + the pod <= hard for
// every resource it tracks that a pod charges.
type quota struct {
	name string
	hard corev1.ResourceList
	used corev1.ResourceList
}

// readQuotas: the namespace's quotas. Scoped quotas are left out (with a
// warning); a quota without status is counted from the pods in the input,
// an honest guess marked uncertain.
func (s *sim) readQuotas() []*quota {
	var out []*quota
	for _, q := range s.in.Quotas {
		if q.Namespace != s.in.Deployment.Namespace {
			continue
		}
		if len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil {
			s.warnings = append(s.warnings, fmt.Sprintf("ResourceQuota %s has scopes, which are not modelled: it is not checked", q.Name))
			s.certain = false
			continue
		}
		qq := &quota{name: q.Name, hard: q.Spec.Hard.DeepCopy(), used: q.Status.Used.DeepCopy()}
		if len(q.Status.Hard) == 0 {
			qq.used = s.usedByPods(qq.hard)
			s.warnings = append(s.warnings, fmt.Sprintf("ResourceQuota %s has no status (the quota controller has not counted it): its usage is counted from the pods in the input", q.Name))
			s.certain = false
		}
		out = append(out, qq)
	}
	return out
}

// usedByPods is what the namespace's pods charge (not in a terminal phase).
func (s *sim) usedByPods(hard corev1.ResourceList) corev1.ResourceList {
	used := corev1.ResourceList{}
	for _, p := range s.in.Pods {
		if p.Namespace != s.in.Deployment.Namespace || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for name, v := range charge(p, hard) {
			cur := used[name]
			cur.Add(v)
			used[name] = cur
		}
	}
	return used
}

// charge is what pod p charges against the resources hard tracks.
func charge(p *corev1.Pod, hard corev1.ResourceList) corev1.ResourceList {
	req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	lim := resourcehelper.PodLimits(p, resourcehelper.PodResourcesOptions{})
	out := corev1.ResourceList{}
	for name := range hard {
		n := string(name)
		switch {
		case n == "pods" || n == "count/pods":
			out[name] = resource.MustParse("1")
		case strings.HasPrefix(n, "requests."):
			out[name] = req[corev1.ResourceName(strings.TrimPrefix(n, "requests."))]
		case strings.HasPrefix(n, "limits."):
			out[name] = lim[corev1.ResourceName(strings.TrimPrefix(n, "limits."))]
		case n == "cpu" || n == "memory" || n == "ephemeral-storage":
			out[name] = req[name]
		}
	}
	return out
}

// admit is the quota admission for a new pod: "" and the charge applied,
// or the FailedCreate message.
func (s *sim) admit(p *corev1.Pod) string {
	for _, q := range s.quotas {
		c := charge(p, q.hard)
		for _, name := range slices.Sorted(maps.Keys(c)) {
			v := c[name]
			if v.IsZero() && computeTracked(name) {
				return fmt.Sprintf("FailedCreate: pods is forbidden: failed quota: %s: must specify %s (unless a LimitRange, not read here, sets a default)", q.name, name)
			}
			total := q.used[name]
			total.Add(v)
			if total.Cmp(q.hard[name]) > 0 {
				used := q.used[name]
				hard := q.hard[name]
				return fmt.Sprintf("FailedCreate: exceeded quota: %s, requested: %s=%s, used: %s=%s, limited: %s=%s", q.name, name, v.String(), name, used.String(), name, hard.String())
			}
		}
	}
	for _, q := range s.quotas {
		q.add(charge(p, q.hard), 1)
	}
	return ""
}

// release: a pod gone gives its charge back.
func (s *sim) release(p *corev1.Pod) {
	for _, q := range s.quotas {
		q.add(charge(p, q.hard), -1)
	}
}

func (q *quota) add(c corev1.ResourceList, sign int) {
	for name, v := range c {
		cur := q.used[name]
		if sign < 0 {
			cur.Sub(v)
		} else {
			cur.Add(v)
		}
		q.used[name] = cur
	}
}

// computeTracked: a compute resource a quota tracks must be set on the pod.
func computeTracked(name corev1.ResourceName) bool {
	switch string(name) {
	case "cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory":
		return true
	}
	return false
}

// The ReplicaSet controller's retry after a FailedCreate (replica_set.go
// processNextWorkItem: a failed sync is AddRateLimited; client-go's
// DefaultTypedControllerRateLimiter: per item 5 ms doubled on each
// consecutive failure up to 1000 s, with an overall 10 qps bucket; Forget
// on a successful sync). updateRS enqueues on every update of the
// ReplicaSet, so a resize by the deployment controller syncs it at once.
const (
	quotaRetryShort = "the ReplicaSet controller retries with back-off (5 ms, doubled per failed sync, at most 1000 s)"
	quotaRetryLong  = "the ReplicaSet controller's sync fails and it requeues the ReplicaSet with client-go's default back-off: " +
		"5 ms, doubled on each consecutive failed sync, at most 1000 s between retries, reset by a successful sync; " +
		"an update of the ReplicaSet (the deployment controller resizing it) syncs it sooner"
	quotaRetried = "created at the ReplicaSet's first sync after the quota freed: the back-off's retry " +
		"or an update of the ReplicaSet, whichever comes first"
)

// quotasUnmodelled warns of the namespace's quotas that charge pods, for
// the DaemonSet and StatefulSet updates, whose FailedCreate under a quota
// is not modelled. A restart or a new image replaces each pod by one alike
// after it is gone (a quota then only delays the create), so only an
// update that may charge more does: surge pods (surges), or a manifest's
// template (--desired), which may ask for more.
func quotasUnmodelled(in Input, ns, kind string, surges bool) []string {
	if !surges && in.Change.Kind != ChangeDesired {
		return nil
	}
	var out []string
	for _, q := range in.Quotas {
		if q.Namespace == ns && chargesPods(q.Spec.Hard) {
			out = append(out, fmt.Sprintf("ResourceQuota %s limits the namespace's pods or their resources, which a %s's update is not modelled against: a new pod it rejects stalls the update there", q.Name, kind))
		}
	}
	return out
}

// chargesPods: hard names a resource that a pod's creation is charged.
func chargesPods(hard corev1.ResourceList) bool {
	for name := range hard {
		n := string(name)
		switch {
		case n == "pods", n == "count/pods", n == "cpu", n == "memory", n == "ephemeral-storage",
			strings.HasPrefix(n, "requests."), strings.HasPrefix(n, "limits."), strings.HasPrefix(n, "hugepages-"):
			return true
		}
	}
	return false
}
