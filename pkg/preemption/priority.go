package preemption

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
)

// The classes every API server creates (pkg/apis/scheduling).
var systemClasses = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

// ErrUnknownPriorityClass is wrapped by ResolvePriority when the pod names a
// class the cluster does not have: admission would reject the pod.
var ErrUnknownPriorityClass = fmt.Errorf("unknown priority class")

// ResolvePriority sets spec.priority and spec.preemptionPolicy of a pod
// that has not been created yet, as the Priority admission plugin would:
// from its priorityClassName, or else from the global default class (the
// highest-valued one when several claim it), or 0.
func ResolvePriority(pod *corev1.Pod, classes []*schedulingv1.PriorityClass) error {
	var class *schedulingv1.PriorityClass
	var value int32
	name := pod.Spec.PriorityClassName
	if name != "" {
		for _, c := range classes {
			if c.Name == name {
				class = c
			}
		}
		if class == nil {
			v, ok := systemClasses[name]
			if !ok {
				return fmt.Errorf("%w %q: admission rejects pod %s (create the PriorityClass or fix priorityClassName)", ErrUnknownPriorityClass, name, pod.Name)
			}
			value = v
		} else {
			value = class.Value
		}
	} else {
		for _, c := range classes {
			if c.GlobalDefault && (class == nil || class.Value < c.Value) {
				class = c
			}
		}
		if class != nil {
			value = class.Value
			pod.Spec.PriorityClassName = class.Name
		}
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != value {
		return fmt.Errorf("pod %s sets spec.priority %d but its priority class gives %d: admission rejects it", pod.Name, *pod.Spec.Priority, value)
	}
	pod.Spec.Priority = &value
	if pod.Spec.PreemptionPolicy == nil {
		policy := corev1.PreemptLowerPriority
		if class != nil && class.PreemptionPolicy != nil {
			policy = *class.PreemptionPolicy
		}
		pod.Spec.PreemptionPolicy = &policy
	}
	return nil
}

// ApplyDefaults fills what the API server's defaulting would for a pod
// read from a file: requests from limits, port protocols, host ports of a
// host-network pod, the scheduler name.
func ApplyDefaults(pod *corev1.Pod) {
	if pod.Namespace == "" {
		pod.Namespace = corev1.NamespaceDefault
	}
	if pod.Spec.SchedulerName == "" {
		pod.Spec.SchedulerName = corev1.DefaultSchedulerName
	}
	fix := func(cs []corev1.Container) {
		for i := range cs {
			c := &cs[i]
			for name, q := range c.Resources.Limits {
				if _, ok := c.Resources.Requests[name]; !ok {
					if c.Resources.Requests == nil {
						c.Resources.Requests = corev1.ResourceList{}
					}
					c.Resources.Requests[name] = q.DeepCopy()
				}
			}
			for j := range c.Ports {
				p := &c.Ports[j]
				if p.Protocol == "" {
					p.Protocol = corev1.ProtocolTCP
				}
				if pod.Spec.HostNetwork && p.HostPort == 0 {
					p.HostPort = p.ContainerPort
				}
			}
		}
	}
	fix(pod.Spec.InitContainers)
	fix(pod.Spec.Containers)
	if pod.Spec.Resources != nil {
		for name, q := range pod.Spec.Resources.Limits {
			if _, ok := pod.Spec.Resources.Requests[name]; !ok {
				if pod.Spec.Resources.Requests == nil {
					pod.Spec.Resources.Requests = corev1.ResourceList{}
				}
				pod.Spec.Resources.Requests[name] = q.DeepCopy()
			}
		}
	}
}
