package rollout

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// shouldRunDaemonPod is the DaemonSet controller's nodeShouldRunDaemonPod:
// the template's nodeName, its required node affinity and node selector,
// and the node's NoSchedule/NoExecute taints against the template's
// tolerations plus the daemon ones. Resources are the scheduler's
// business: a pod that does not fit is created and stays Pending.
func shouldRunDaemonPod(ds *appsv1.DaemonSet, node *corev1.Node) bool {
	spec := &ds.Spec.Template.Spec
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return false
	}
	if ok, _ := nodeaffinity.NewRequiredNodeAffinity(spec.NodeSelector, spec.Affinity).Match(node); !ok {
		return false
	}
	_, bad := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, daemonTolerations(spec), func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false)
	return !bad
}

// daemonTolerations are the template's tolerations plus those the
// controller adds to every daemon pod (AddOrUpdateDaemonPodTolerations).
func daemonTolerations(spec *corev1.PodSpec) []corev1.Toleration {
	out := append([]corev1.Toleration(nil), spec.Tolerations...)
	add := func(key string, effect corev1.TaintEffect) {
		t := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
		for _, have := range out {
			if have.MatchToleration(&t) {
				return
			}
		}
		out = append(out, t)
	}
	add(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodePIDPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)
	}
	return out
}

// readNewHash is the controller-revision-hash the new pods carry when the
// change's template is one an earlier ControllerRevision of the DaemonSet
// already has (constructHistory reuses it, as a rollback does): pods still
// at it count as new. A restart's template is always new ("").
func (s *dsSim) readNewHash() string {
	if s.in.Change.Kind == ChangeRestart {
		return ""
	}
	if !s.in.RevisionsRead {
		s.certain = false
		s.warnings = append(s.warnings, fmt.Sprintf("the input holds no ControllerRevisions: if an earlier revision of daemonset %s has this template (a rollback), its pods would count as new; every pod is counted as old (add kubectl get controllerrevisions -o yaml)", s.ds.Name))
		return ""
	}
	for _, cr := range s.in.Revisions {
		c := metav1.GetControllerOf(cr)
		if cr.Namespace != s.ds.Namespace || c == nil || c.UID != s.ds.UID {
			continue
		}
		var data struct {
			Spec struct {
				Template corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		if json.Unmarshal(cr.Data.Raw, &data) != nil {
			continue
		}
		if apiequality.Semantic.DeepEqual(data.Spec.Template, *s.template) {
			if h := cr.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]; h != "" {
				return h
			}
		}
	}
	return ""
}
