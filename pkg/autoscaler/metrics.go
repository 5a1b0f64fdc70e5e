package autoscaler

import (
	"fmt"
	"math"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// tolerances is the controller's Tolerances.
type tolerances struct{ down, up float64 }

func (t tolerances) within(ratio float64) bool {
	return (1.0-t.down) <= ratio && ratio <= (1.0+t.up)
}

func tolerancesFor(h *autoscalingv2.HorizontalPodAutoscaler, c Config) tolerances {
	t := tolerances{c.Tolerance, c.Tolerance}
	b := h.Spec.Behavior
	if b == nil || !c.ConfigurableTolerance {
		return t
	}
	if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
		t.down = b.ScaleDown.Tolerance.AsApproximateFloat64()
	}
	if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
		t.up = b.ScaleUp.Tolerance.AsApproximateFloat64()
	}
	return t
}

// metricsProposal is computeReplicasForMetrics: the highest proposal of
// all metrics. ok is false when the controller would not scale at all.
func metricsProposal(in Input, r *Recommendation) (interval, bool) {
	h := in.HPA
	tol := tolerancesFor(h, in.Config)
	var best interval
	first := true
	invalid := 0
	firstInvalid := ""
	for i, spec := range h.Spec.Metrics {
		var st *autoscalingv2.MetricStatus
		if i < len(h.Status.CurrentMetrics) && h.Status.CurrentMetrics[i].Type == spec.Type {
			st = &h.Status.CurrentMetrics[i]
		}
		m, v, err := proposal(in, spec, st, tol)
		if err != nil {
			invalid++
			if firstInvalid == "" {
				firstInvalid = err.Error()
			}
			m.Note = err.Error()
			r.Metrics = append(r.Metrics, m)
			continue
		}
		m.Replicas, m.ReplicasMax = v.lo, v.hi
		r.Metrics = append(r.Metrics, m)
		if first {
			best, first = v, false
		} else {
			best = best.max(v)
		}
	}
	if len(h.Spec.Metrics) == 0 {
		r.Reason = "the autoscaler has no metrics: it does not scale"
		return interval{}, false
	}
	if invalid > 0 && (invalid >= len(h.Spec.Metrics) || best.lo < in.SpecReplicas) {
		// The controller refuses to scale down while a metric is invalid.
		r.Reason = fmt.Sprintf("%d of %d metrics cannot be computed from the status (%s): the controller does not scale down while a metric is invalid", invalid, len(h.Spec.Metrics), firstInvalid)
		if invalid < len(h.Spec.Metrics) && best.hi >= in.SpecReplicas {
			r.Certain = false
			r.Uncertain = append(r.Uncertain, "the valid metrics may ask for a scale-up, which the controller would still do")
		}
		return interval{}, false
	}
	return best, true
}

// podGroups is groupPods as far as the API shows it.
type podGroups struct {
	counted   int // have a metric and count toward the average
	unready   int // pending, or (CPU) not ready
	ambiguous int // CPU: counted or unready depending on the metric's timestamp
	missing   int // cannot have a metric (Succeeded, Unknown)
}

func group(pods []*corev1.Pod, cpu bool, in Input) podGroups {
	var g podGroups
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed {
			continue // ignored
		}
		switch p.Status.Phase {
		case corev1.PodPending:
			g.unready++
			continue
		case corev1.PodRunning:
		default:
			g.missing++
			continue
		}
		if !cpu {
			g.counted++
			continue
		}
		cond := readyCondition(p)
		switch {
		case cond == nil || p.Status.StartTime == nil:
			g.unready++
		case p.Status.StartTime.Add(in.Config.CPUInitializationPeriod).After(in.Now):
			// Inside the initialization period the controller compares
			// the metric's timestamp with the last readiness change: the
			// timestamp is not in the API.
			if cond.Status == corev1.ConditionFalse {
				g.unready++
			} else {
				g.ambiguous++
			}
		case cond.Status == corev1.ConditionFalse && p.Status.StartTime.Add(in.Config.InitialReadinessDelay).After(cond.LastTransitionTime.Time):
			g.unready++ // never been ready
		default:
			g.counted++
		}
	}
	return g
}

func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// readyRunning is getReadyPodsCount.
func readyRunning(pods []*corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if c := readyCondition(p); p.Status.Phase == corev1.PodRunning && c != nil && c.Status == corev1.ConditionTrue {
			n++
		}
	}
	return n
}

func ceilTimes(ratio float64, n int) int32 { return int32(math.Ceil(ratio * float64(n))) }

// perPod is the replica calculation for metrics averaged over the pods
// (Resource, ContainerResource, Pods), from the average in the status.
func perPod(in Input, ratio float64, g podGroups, tol tolerances) (interval, string, error) {
	current := in.SpecReplicas
	if len(in.Pods) == 0 {
		return interval{}, "", fmt.Errorf("no pods match the target's selector")
	}
	if g.counted+g.ambiguous == 0 {
		return interval{}, "", fmt.Errorf("no pod can report a metric (all pending, unready or terminating)")
	}
	if tol.within(ratio) {
		return point(current), "within tolerance", nil
	}
	n, a := g.counted, g.ambiguous
	switch {
	case ratio < 1:
		if g.missing == 0 {
			v := interval{ceilTimes(ratio, n), ceilTimes(ratio, n+a)}
			note := ""
			if a > 0 {
				note = fmt.Sprintf("%d pod(s) started less than %s ago: whether the controller counts them depends on metric timestamps the API does not show", a, in.Config.CPUInitializationPeriod)
			}
			return v, note, nil
		}
		return interval{min(ceilTimes(ratio, n+g.missing), current), current},
			fmt.Sprintf("%d pod(s) cannot report a metric: the controller counts them at the target, from per-pod values the status does not show", g.missing), nil
	default:
		if g.unready+a+g.missing == 0 {
			return point(ceilTimes(ratio, n)), "", nil
		}
		return interval{min(ceilTimes(ratio, n), current), max(current, ceilTimes(ratio, n+g.unready+a+g.missing))},
			"unready or metric-less pods count as 0 on a scale-up, from per-pod values the status does not show", nil
	}
}

// whole is getUsageRatioReplicaCount (Object and External Value targets).
func whole(in Input, ratio float64, tol tolerances) (interval, error) {
	if tol.within(ratio) {
		return point(in.SpecReplicas), nil
	}
	if len(in.Pods) == 0 {
		return interval{}, fmt.Errorf("no pods match the target's selector")
	}
	f := ratio * float64(readyRunning(in.Pods))
	if f > math.MaxInt32 {
		return point(math.MaxInt32), nil
	}
	return point(int32(math.Ceil(f))), nil
}

// averaged is GetObjectPerPodMetricReplicas / GetExternalPerPodMetricReplicas.
// The status shows ceil(usage/statusReplicas), not the usage: every usage
// that rounds to that average is tried.
func averaged(in Input, avg, target int64, tol tolerances) (interval, error) {
	sr := int64(in.StatusReplicas)
	if sr <= 0 {
		return interval{}, fmt.Errorf("the target reports 0 replicas in its status")
	}
	if target <= 0 {
		return interval{}, fmt.Errorf("the target value is not positive")
	}
	lo, hi := (avg-1)*sr+1, avg*sr
	if avg <= 0 {
		lo, hi = avg*sr, avg*sr
	}
	calc := func(usage int64) int32 {
		ratio := float64(usage) / (float64(target) * float64(sr))
		if tol.within(ratio) {
			return int32(sr)
		}
		c := math.Ceil(float64(usage) / float64(target))
		if c > math.MaxInt32 {
			return math.MaxInt32
		}
		return int32(c)
	}
	out := point(calc(lo))
	step := int64(1)
	if hi-lo > 1_000_000 {
		step = (hi - lo) / 1_000_000
	}
	for u := lo; u <= hi; u += step {
		v := calc(u)
		out.lo, out.hi = min(out.lo, v), max(out.hi, v)
	}
	v := calc(hi)
	out.lo, out.hi = min(out.lo, v), max(out.hi, v)
	return out, nil
}

// proposal computes one metric's replica count from its status.
func proposal(in Input, spec autoscalingv2.MetricSpec, st *autoscalingv2.MetricStatus, tol tolerances) (Metric, interval, error) {
	m := Metric{Name: metricName(spec)}
	switch spec.Type {
	case autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType:
		return resourceProposal(in, spec, st, tol, m)
	case autoscalingv2.PodsMetricSourceType:
		if spec.Pods == nil || spec.Pods.Target.AverageValue == nil {
			return m, interval{}, fmt.Errorf("%s has no average value target", m.Name)
		}
		if st == nil || st.Pods == nil || st.Pods.Current.AverageValue == nil {
			return missingValue(m)
		}
		usage, t := st.Pods.Current.AverageValue.MilliValue(), spec.Pods.Target.AverageValue.MilliValue()
		m.Current, m.Target = st.Pods.Current.AverageValue.String(), spec.Pods.Target.AverageValue.String()
		m.Ratio = float64(usage) / float64(t)
		v, note, err := perPod(in, m.Ratio, group(in.Pods, false, in), tol)
		m.Note = note
		return m, v, err
	case autoscalingv2.ObjectMetricSourceType, autoscalingv2.ExternalMetricSourceType:
		return objectProposal(in, spec, st, tol, m)
	}
	return m, interval{}, fmt.Errorf("unknown metric type %q", spec.Type)
}

func missingValue(m Metric) (Metric, interval, error) {
	return m, interval{}, fmt.Errorf("no current value for %s in the status", m.Name)
}

// resourceProposal covers Resource and ContainerResource metrics: the
// controller averages per-pod usage over the pods it counts.
func resourceProposal(in Input, spec autoscalingv2.MetricSpec, st *autoscalingv2.MetricStatus, tol tolerances, m Metric) (Metric, interval, error) {
	var target autoscalingv2.MetricTarget
	var name corev1.ResourceName
	var cur *autoscalingv2.MetricValueStatus
	switch {
	case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
		target, name = spec.Resource.Target, spec.Resource.Name
		if st != nil && st.Resource != nil {
			cur = &st.Resource.Current
		}
	case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
		target, name = spec.ContainerResource.Target, spec.ContainerResource.Name
		if st != nil && st.ContainerResource != nil {
			cur = &st.ContainerResource.Current
		}
	default:
		return missingValue(m)
	}
	g := group(in.Pods, name == corev1.ResourceCPU, in)
	switch {
	case target.AverageValue != nil:
		if cur == nil || cur.AverageValue == nil {
			return missingValue(m)
		}
		usage, t := cur.AverageValue.MilliValue(), target.AverageValue.MilliValue()
		m.Current, m.Target = cur.AverageValue.String(), target.AverageValue.String()
		m.Ratio = float64(usage) / float64(t)
	case target.AverageUtilization != nil:
		if cur == nil || cur.AverageUtilization == nil {
			return missingValue(m)
		}
		m.Current, m.Target = fmt.Sprintf("%d%%", *cur.AverageUtilization), fmt.Sprintf("%d%%", *target.AverageUtilization)
		m.Ratio = float64(*cur.AverageUtilization) / float64(*target.AverageUtilization)
	default:
		return m, interval{}, fmt.Errorf("%s has neither an average value nor an average utilization target", m.Name)
	}
	v, note, err := perPod(in, m.Ratio, g, tol)
	m.Note = note
	return m, v, err
}

// objectProposal covers Object and External metrics: one value for the
// whole target, or an average per replica.
func objectProposal(in Input, spec autoscalingv2.MetricSpec, st *autoscalingv2.MetricStatus, tol tolerances, m Metric) (Metric, interval, error) {
	var target autoscalingv2.MetricTarget
	var cur *autoscalingv2.MetricValueStatus
	switch {
	case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
		target = spec.Object.Target
		if st != nil && st.Object != nil {
			cur = &st.Object.Current
		}
	case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
		target = spec.External.Target
		if st != nil && st.External != nil {
			cur = &st.External.Current
		}
	default:
		return missingValue(m)
	}
	// Object checks Value first, External AverageValue first.
	useValue := target.Value != nil && (spec.Type == autoscalingv2.ObjectMetricSourceType && target.Type == autoscalingv2.ValueMetricType ||
		spec.Type == autoscalingv2.ExternalMetricSourceType && target.AverageValue == nil)
	useAverage := target.AverageValue != nil && !useValue &&
		(spec.Type == autoscalingv2.ExternalMetricSourceType || target.Type == autoscalingv2.AverageValueMetricType)
	switch {
	case useValue:
		if cur == nil || cur.Value == nil {
			return missingValue(m)
		}
		m.Current, m.Target = cur.Value.String(), target.Value.String()
		m.Ratio = float64(cur.Value.MilliValue()) / float64(target.Value.MilliValue())
		v, err := whole(in, m.Ratio, tol)
		return m, v, err
	case useAverage:
		if cur == nil || cur.AverageValue == nil {
			return missingValue(m)
		}
		m.Current, m.Target = cur.AverageValue.String()+" per replica", target.AverageValue.String()+" per replica"
		avg, t := cur.AverageValue.MilliValue(), target.AverageValue.MilliValue()
		m.Ratio = float64(avg) / float64(t)
		v, err := averaged(in, avg, t, tol)
		if err == nil && v.lo != v.hi {
			m.Note = "the status rounds the total up to a per-replica average; totals that round alike give different counts"
		}
		return m, v, err
	}
	return m, interval{}, fmt.Errorf("%s has neither a value nor an average value target", m.Name)
}

func metricName(s autoscalingv2.MetricSpec) string {
	switch {
	case s.Type == autoscalingv2.ResourceMetricSourceType && s.Resource != nil:
		return string(s.Resource.Name) + " resource"
	case s.Type == autoscalingv2.ContainerResourceMetricSourceType && s.ContainerResource != nil:
		return string(s.ContainerResource.Name) + " of container " + s.ContainerResource.Container
	case s.Type == autoscalingv2.PodsMetricSourceType && s.Pods != nil:
		return "pods metric " + s.Pods.Metric.Name
	case s.Type == autoscalingv2.ObjectMetricSourceType && s.Object != nil:
		return s.Object.DescribedObject.Kind + "/" + s.Object.DescribedObject.Name + " metric " + s.Object.Metric.Name
	case s.Type == autoscalingv2.ExternalMetricSourceType && s.External != nil:
		return "external metric " + s.External.Metric.Name
	}
	return string(s.Type)
}
