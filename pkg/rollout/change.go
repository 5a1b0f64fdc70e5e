package rollout

import (
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// newTemplate is the Deployment's template after the change, as kubectl
// writes it.
func newTemplate(d *appsv1.Deployment, c Change, now time.Time) (*corev1.PodTemplateSpec, error) {
	return changedTemplate("deployment", d.Name, &d.Spec.Template, d.Spec.Paused, c, now)
}

// changedTemplate is a workload's template after the change; only a
// Deployment can be paused (and resumed).
func changedTemplate(kind, name string, tmpl *corev1.PodTemplateSpec, paused bool, c Change, now time.Time) (*corev1.PodTemplateSpec, error) {
	t := tmpl.DeepCopy()
	switch c.Kind {
	case ChangeRestart:
		if paused {
			// kubectl rollout restart's own refusal.
			return nil, changeErr("can't restart paused %s %s (run kubectl rollout resume first)", kind, name)
		}
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		t.Annotations[RestartedAtAnnotation] = now.Format(time.RFC3339)
	case ChangeImage:
		if err := setImages(t, c.Images); err != nil {
			return nil, err
		}
	case ChangeResume:
		if kind != "deployment" {
			return nil, changeErr("--resume: a %s cannot be paused (kubectl rollout resume takes Deployments)", kind)
		}
		if !paused {
			return nil, changeErr("deployment %s is not paused: kubectl rollout resume has nothing to resume", name)
		}
	}
	return t, nil
}

// setImages is kubectl set image: "*" sets every container and init
// container; a name the template lacks is an error.
func setImages(t *corev1.PodTemplateSpec, images map[string]string) error {
	names := make([]string, 0, len(images))
	for n := range images {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		found := false
		for _, list := range [][]corev1.Container{t.Spec.InitContainers, t.Spec.Containers} {
			for i := range list {
				if name == "*" || list[i].Name == name {
					list[i].Image = images[name]
					found = true
				}
			}
		}
		if !found {
			return changeErr("unable to find container named %q in the pod template", name)
		}
	}
	return nil
}

// checkStrategy refuses what the API server never stores: a negative or
// malformed maxSurge/maxUnavailable.
func checkStrategy(d *appsv1.Deployment) error {
	ru := d.Spec.Strategy.RollingUpdate
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType || ru == nil {
		return nil
	}
	for i, v := range []*intstr.IntOrString{ru.MaxSurge, ru.MaxUnavailable} {
		name := []string{"maxSurge", "maxUnavailable"}[i]
		if v == nil {
			continue
		}
		n, err := intstr.GetScaledValueFromIntOrPercent(v, 100, true)
		if err != nil || n < 0 {
			return inputErr("deployment %s: spec.strategy.rollingUpdate.%s %q is not a non-negative integer or percentage (fix the file: the API server rejects it)", d.Name, name, v.String())
		}
	}
	return nil
}

func podName(p *corev1.Pod) string { return fmt.Sprintf("%s/%s", p.Namespace, p.Name) }
