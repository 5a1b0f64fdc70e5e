// Package sourcetest writes realistic snapshot files for the file reader's
// benchmarks and the side-by-side measurements: one Deployment, its
// ReplicaSet and n pods shaped as `kubectl get deploy,rs,pods -o json` (or
// -o yaml) prints them, managed fields, probes, env and volumes included
// (about 2.5 KB of JSON per pod), so that parse costs are realistic.
package sourcetest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/scale-preview/scale-preview/pkg/engine/enginetest"
)

// Now is the reference time the pods' ages are generated against.
var Now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	deployUID = "5b1d0c57-1f0e-4c39-9d5a-1d2c3e4f5a60"
	rsUID     = "9a7c2e11-3b4d-4e5f-8a9b-0c1d2e3f4a5b"
	hash      = "7d9f8c6b5"
)

// Objects returns the Deployment "web" (namespace bench, n replicas), its
// ReplicaSet and n pods.
func Objects(n int) (*appsv1.Deployment, *appsv1.ReplicaSet, []*corev1.Pod) {
	replicas := int32(n)
	labels := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec()}
	d := &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "bench", UID: deployUID, Generation: 3,
			CreationTimestamp: metav1.NewTime(Now.Add(-90 * 24 * time.Hour))},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: replicas, ReadyReplicas: replicas,
			AvailableReplicas: replicas, UpdatedReplicas: replicas},
	}
	rsLabels := map[string]string{"app": "web", "pod-template-hash": hash}
	rs := &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-" + hash, Namespace: "bench", UID: rsUID, Labels: rsLabels,
			CreationTimestamp: metav1.NewTime(Now.Add(-90 * 24 * time.Hour)),
			Annotations: map[string]string{"deployment.kubernetes.io/desired-replicas": fmt.Sprint(n),
				"deployment.kubernetes.io/max-replicas": fmt.Sprint(n + n/4), "deployment.kubernetes.io/revision": "1"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: rsLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: rsLabels}, Spec: podSpec()}},
		Status: appsv1.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas, ObservedGeneration: 3},
	}
	base, _, _ := enginetest.Fleet(n, 1, Now)
	pods := make([]*corev1.Pod, n)
	for i, b := range base {
		pods[i] = decorate(b, rs)
	}
	return d, rs, pods
}

func podSpec() corev1.PodSpec {
	grace := int64(30)
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "web", Image: "registry.example.com/shop/web:1.27.3", ImagePullPolicy: corev1.PullIfNotPresent,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			// Long values with spaces, as real ones are: kubectl's YAML
			// breaks them over lines (plain, and single-quoted with ": ").
			Args: []string{"--listen=:8080", "--upstreams=catalog: http://catalog:8080, cart: http://cart:8080, checkout: http://checkout:8080"},
			Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"},
				{Name: "JAVA_TOOL_OPTIONS", Value: "-XX:MaxRAMPercentage=75.0 -XX:+UseG1GC -XX:MaxGCPauseMillis=200 -Dfile.encoding=UTF-8 -Duser.timezone=UTC"},
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}},
			VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
			TerminationMessagePath:   "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}},
		RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace, DNSPolicy: corev1.DNSClusterFirst,
		ServiceAccountName: "default", SchedulerName: "default-scheduler", SecurityContext: &corev1.PodSecurityContext{},
	}
}

func decorate(b *corev1.Pod, rs *appsv1.ReplicaSet) *corev1.Pod {
	p := b.DeepCopy()
	p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	p.GenerateName = "web-" + hash + "-"
	p.ResourceVersion = fmt.Sprint(1000000 + len(p.Name)*7919)
	p.Labels = map[string]string{"app": "web", "pod-template-hash": hash}
	p.Annotations = map[string]string{"shop.example.com/owner": "Équipe boutique – web"} // non-ASCII text
	p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	ts := p.CreationTimestamp
	p.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}`)},
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1", Subresource: "status",
			FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:phase":{},"f:podIP":{},"f:startTime":{}}}`)},
	}
	p.Spec = podSpec()
	p.Spec.NodeName = b.Spec.NodeName
	p.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}}
	p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	created := p.CreationTimestamp
	conds := []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: created}}
	if p.Spec.NodeName != "" {
		conds = append(conds,
			corev1.PodCondition{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue, LastTransitionTime: created},
			corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: created})
		// The generator's Ready condition, and ContainersReady alongside.
		conds = append(conds, b.Status.Conditions...)
		for _, c := range b.Status.Conditions {
			conds = append(conds, corev1.PodCondition{Type: corev1.ContainersReady, Status: c.Status, LastTransitionTime: c.LastTransitionTime})
		}
		p.Status.HostIP, p.Status.PodIP = "10.0.0.1", "10.244.1.7"
		p.Status.HostIPs, p.Status.PodIPs = []corev1.HostIP{{IP: "10.0.0.1"}}, []corev1.PodIP{{IP: "10.244.1.7"}}
		p.Status.StartTime = &created
		ready := len(b.Status.Conditions) > 0 && b.Status.Conditions[0].Status == corev1.ConditionTrue
		started := true
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web", Ready: ready, Started: &started,
			RestartCount: b.Status.ContainerStatuses[0].RestartCount,
			Image:        "registry.example.com/shop/web:1.27.3", ImageID: "registry.example.com/shop/web@sha256:4c0a7f5e9d3b",
			ContainerID: "containerd://" + fmt.Sprintf("%016x", len(p.Name)),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: created}}}}
	}
	p.Status.Conditions = conds
	p.Status.QOSClass = corev1.PodQOSBurstable
	return p
}

// items is the objects in the order kubectl lists them.
func items(n int) []any {
	d, rs, pods := Objects(n)
	out := []any{d, rs}
	for _, p := range pods {
		out = append(out, p)
	}
	return out
}

// WriteJSON writes the objects as a v1 List, one item per line (kubectl
// indents; whitespace aside the content is the same).
func WriteJSON(w io.Writer, n int) error {
	items := items(n)
	// bufio keeps the first write error and Flush returns it.
	bw := bufio.NewWriterSize(w, 1<<20)
	_, _ = bw.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")
	for i, o := range items {
		b, err := json.Marshal(o)
		if err != nil {
			return err
		}
		_, _ = bw.Write(b)
		if i < len(items)-1 {
			_, _ = bw.WriteString(",")
		}
		_, _ = bw.WriteString("\n")
	}
	_, _ = bw.WriteString("    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")
	return bw.Flush()
}

// WriteYAML writes the objects as a v1 List in YAML, as kubectl prints it.
func WriteYAML(w io.Writer, n int) error {
	// bufio keeps the first write error and Flush returns it.
	bw := bufio.NewWriterSize(w, 1<<20)
	_, _ = bw.WriteString("apiVersion: v1\nitems:\n")
	for _, o := range items(n) {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		prefix := "- "
		for len(b) > 0 {
			line := b
			if i := indexByte(b, '\n'); i >= 0 {
				line, b = b[:i+1], b[i+1:]
			} else {
				b = nil
			}
			_, _ = bw.WriteString(prefix)
			_, _ = bw.Write(line)
			prefix = "  "
		}
	}
	_, _ = bw.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	return bw.Flush()
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
