// Package autoscaler computes the replica count a HorizontalPodAutoscaler
// recommends next, the way the HPA controller of kube-controller-manager
// does (pkg/controller/podautoscaler in Kubernetes 1.37), from what the API
// shows: the spec, status.currentMetrics, the target's replicas and pods.
//
// The controller works from raw per-pod metrics; the status only has their
// averages. Where the average is not enough to repeat the controller's
// arithmetic the result is a range and marked uncertain, with the reason.
// History the controller keeps in memory (the stabilization window's
// recommendations, past scale events) is not in the API: the model assumes
// the window has seen only this recommendation and says so in the notes.
//
// The package is pure: no clients, no clock, no globals.
package autoscaler

import (
	"fmt"
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// Config is kube-controller-manager's HPA settings.
type Config struct {
	// Tolerance is --horizontal-pod-autoscaler-tolerance.
	Tolerance float64
	// DownscaleStabilization is --horizontal-pod-autoscaler-downscale-stabilization.
	DownscaleStabilization time.Duration
	// CPUInitializationPeriod is --horizontal-pod-autoscaler-cpu-initialization-period.
	CPUInitializationPeriod time.Duration
	// InitialReadinessDelay is --horizontal-pod-autoscaler-initial-readiness-delay.
	InitialReadinessDelay time.Duration
	// ConfigurableTolerance: the HPAConfigurableTolerance gate is on, so
	// behavior.scale{Up,Down}.tolerance overrides Tolerance.
	ConfigurableTolerance bool
}

// DefaultConfig is kube-controller-manager's defaults.
func DefaultConfig() Config {
	return Config{
		Tolerance:               0.1,
		DownscaleStabilization:  5 * time.Minute,
		CPUInitializationPeriod: 5 * time.Minute,
		InitialReadinessDelay:   30 * time.Second,
		ConfigurableTolerance:   true,
	}
}

// Input is what the controller reads on one sync.
type Input struct {
	HPA *autoscalingv2.HorizontalPodAutoscaler
	// SpecReplicas and StatusReplicas are the target's scale subresource.
	SpecReplicas   int32
	StatusReplicas int32
	// Pods are the pods of the HPA's namespace matching the target's
	// selector, whoever owns them: the controller lists exactly those.
	Pods   []*corev1.Pod
	Now    time.Time
	Config Config
}

// Metric is one metric's proposal.
type Metric struct {
	Name    string `json:"name"`
	Current string `json:"current"`
	Target  string `json:"target"`
	// Ratio is current/target as the controller computes it (0 when unknown).
	Ratio float64 `json:"ratio"`
	// Replicas is the proposal; ReplicasMax > Replicas when the status
	// leaves a range open.
	Replicas    int32  `json:"replicas"`
	ReplicasMax int32  `json:"replicasMax"`
	Note        string `json:"note,omitempty"`
}

// Recommendation is the controller's next replica count for the target.
type Recommendation struct {
	Current int32 `json:"currentReplicas"`
	// Desired is the next scale, assuming metrics stay as in the status and
	// the stabilization window has seen only this recommendation.
	Desired int32 `json:"desiredReplicas"`
	// DesiredMax > Desired when the inputs leave a range open.
	DesiredMax int32 `json:"desiredReplicasMax"`
	// Certain: the inputs determine Desired (under the assumptions in Notes).
	Certain bool `json:"certain"`
	// Reason says what decided Desired.
	Reason  string   `json:"reason"`
	Metrics []Metric `json:"metrics"`
	// StabilizationWindowSeconds applies to a scale-down.
	StabilizationWindowSeconds int32 `json:"stabilizationWindowSeconds"`
	// Uncertain lists why Certain is false.
	Uncertain []string `json:"uncertain"`
	// Notes say what the API does not show.
	Notes []string `json:"notes"`
}

// ScaleIn reports whether the recommendation removes pods.
func (r *Recommendation) ScaleIn() bool { return r.Desired < r.Current }

// interval is a closed range of replica counts.
type interval struct{ lo, hi int32 }

func point(v int32) interval { return interval{v, v} }

func (a interval) max(b interval) interval {
	return interval{max(a.lo, b.lo), max(a.hi, b.hi)}
}

// Recommend runs one sync of the controller's decision on in.
func Recommend(in Input) (*Recommendation, error) {
	h := in.HPA
	if h == nil {
		return nil, fmt.Errorf("no HorizontalPodAutoscaler given")
	}
	r := &Recommendation{Current: in.SpecReplicas, Metrics: []Metric{}, Uncertain: []string{}, Notes: []string{}, Certain: true}
	minReplicas := int32(1)
	if h.Spec.MinReplicas != nil {
		minReplicas = *h.Spec.MinReplicas
	}
	behavior := withDefaults(h.Spec.Behavior, in.Config)
	r.StabilizationWindowSeconds = int32(in.Config.DownscaleStabilization.Seconds())
	if behavior != nil {
		r.StabilizationWindowSeconds = *behavior.ScaleDown.StabilizationWindowSeconds
	}
	current := in.SpecReplicas
	set := func(v interval, reason string) (*Recommendation, error) {
		r.Desired, r.DesiredMax, r.Reason = v.lo, v.hi, reason
		if v.lo != v.hi {
			r.Certain = false
		}
		return r, nil
	}
	// The bounds come first and bypass metrics, stabilization and policies.
	switch {
	case current == 0:
		return set(point(0), "the target has 0 replicas: the autoscaler does not scale it (scaling is disabled)")
	case current > h.Spec.MaxReplicas:
		return set(point(h.Spec.MaxReplicas), fmt.Sprintf("%d replicas are above maxReplicas %d: the autoscaler scales to %d at its next sync, without waiting for metrics or the stabilization window", current, h.Spec.MaxReplicas, h.Spec.MaxReplicas))
	case current < minReplicas:
		return set(point(minReplicas), fmt.Sprintf("%d replicas are below minReplicas %d: the autoscaler scales up to %d", current, minReplicas, minReplicas))
	}

	raw, ok := metricsProposal(in, r)
	if !ok {
		return set(point(current), r.Reason)
	}
	noteMetricsAndWindow(h, r, raw, current)
	var desired interval
	reason := ""
	if behavior == nil {
		desired, reason = withoutBehavior(h, minReplicas, raw, current)
	} else {
		desired, reason = withPolicies(in, behavior, minReplicas, raw, r)
	}
	if reason == "" {
		reason = fmt.Sprintf("the metrics ask for %s", rangeText(raw))
	}
	return set(desired, reason)
}

// noteMetricsAndWindow says what the metrics' range and the status's
// averages leave open, and what the stabilization window (kept only in
// the controller's memory) may still hold back.
func noteMetricsAndWindow(h *autoscalingv2.HorizontalPodAutoscaler, r *Recommendation, raw interval, current int32) {
	if raw.lo != raw.hi {
		r.Certain = false
		for _, m := range r.Metrics {
			if m.Replicas != m.ReplicasMax {
				r.Uncertain = append(r.Uncertain, fmt.Sprintf("%s: %d to %d replicas: %s", m.Name, m.Replicas, m.ReplicasMax, m.Note))
			}
		}
	}
	for _, s := range h.Spec.Metrics {
		if s.Type == autoscalingv2.ResourceMetricSourceType || s.Type == autoscalingv2.ContainerResourceMetricSourceType || s.Type == autoscalingv2.PodsMetricSourceType {
			r.Notes = append(r.Notes, "the status shows averages, not per-pod values: the count assumes every running pod reported a metric (the controller counts a pod without one at the target on a scale-in, which makes the step smaller)")
			break
		}
	}
	// Stabilization: the controller takes the highest recommendation of the
	// window (scale-down) and the lowest of the scale-up window. Those
	// histories live only in the controller's memory.
	if raw.lo < current {
		r.Notes = append(r.Notes, fmt.Sprintf("the scale-down stabilization window (%ds) keeps the controller's recent recommendations in memory, not in the API: the scale-in happens at the earliest once every recommendation of the last %ds is at most the new count; if higher ones remain, it first scales to the highest of them", r.StabilizationWindowSeconds, r.StabilizationWindowSeconds))
		if c := condition(h, autoscalingv2.AbleToScale); c != nil && c.Reason == "ScaleDownStabilized" {
			r.Notes = append(r.Notes, fmt.Sprintf("the controller reported %s since %s: its window still held a higher recommendation then", c.Reason, c.LastTransitionTime.UTC().Format(time.RFC3339)))
		}
		r.Notes = append(r.Notes, "the metrics can change before the controller acts: this is the step it takes if they stay as in the status")
	}
}

// withoutBehavior is convertDesiredReplicasWithRules: the count within
// minReplicas and the scale-up limit.
func withoutBehavior(h *autoscalingv2.HorizontalPodAutoscaler, minReplicas int32, raw interval, current int32) (interval, string) {
	upLimit := int32(math.Max(2*float64(current), 4))
	maxAllowed := min(h.Spec.MaxReplicas, upLimit)
	clamp := func(v int32) int32 { return min(max(v, minReplicas), maxAllowed) }
	desired := interval{clamp(raw.lo), clamp(raw.hi)}
	switch {
	case raw.lo < minReplicas:
		return desired, fmt.Sprintf("the metrics ask for %d, raised to minReplicas %d", raw.lo, minReplicas)
	case raw.hi > maxAllowed:
		return desired, fmt.Sprintf("the metrics ask for %d, capped at %d", raw.hi, maxAllowed)
	}
	return desired, ""
}

// withPolicies is convertDesiredReplicasWithBehaviorRate with no scale
// event inside any policy period (the API shows only the last scale time).
func withPolicies(in Input, b *autoscalingv2.HorizontalPodAutoscalerBehavior, minReplicas int32, raw interval, r *Recommendation) (interval, string) {
	h, current := in.HPA, in.SpecReplicas
	var rules *autoscalingv2.HPAScalingRules
	one := func(desired int32) (int32, string) {
		switch {
		case desired > current:
			limit := policyLimit(current, b.ScaleUp, true)
			if limit < current {
				limit = current
			}
			maxAllowed := h.Spec.MaxReplicas
			why := "maxReplicas"
			if maxAllowed > limit {
				maxAllowed, why = limit, "the scaleUp policies"
			}
			if desired > maxAllowed {
				return maxAllowed, fmt.Sprintf("the metrics ask for %d, capped at %d by %s", desired, maxAllowed, why)
			}
		case desired < current:
			limit := policyLimit(current, b.ScaleDown, false)
			if limit > current {
				limit = current
			}
			minAllowed := minReplicas
			why := "minReplicas"
			if minAllowed < limit {
				minAllowed, why = limit, "the scaleDown policies"
			}
			if desired < minAllowed {
				return minAllowed, fmt.Sprintf("the metrics ask for %d, raised to %d by %s", desired, minAllowed, why)
			}
		}
		return desired, ""
	}
	lo, why := one(raw.lo)
	hi, _ := one(raw.hi)
	if raw.lo > current {
		rules = b.ScaleUp
	} else if raw.lo < current {
		rules = b.ScaleDown
	}
	if rules != nil && h.Status.LastScaleTime != nil {
		period := time.Duration(longestPeriod(rules)) * time.Second
		last := h.Status.LastScaleTime.Time
		if in.Now.Before(last.Add(period)) {
			r.Certain = false
			r.Uncertain = append(r.Uncertain, fmt.Sprintf("the last scale (%s) is inside the %ds policy period: the controller counts the pods it changed then (not shown in the API) and may change fewer now; the step shown is allowed from %s", last.UTC().Format(time.RFC3339), int(period.Seconds()), last.Add(period).UTC().Format(time.RFC3339)))
		}
	}
	return interval{lo, hi}, why
}

// policyLimit is calculateScaleUpLimitWithScalingRules (up) or
// calculateScaleDownLimitWithBehaviors with no past events: the furthest
// count the policies allow from current.
func policyLimit(current int32, rules *autoscalingv2.HPAScalingRules, up bool) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	// Max picks the biggest change: the highest count up, the lowest down.
	highest := up == (*rules.SelectPolicy != autoscalingv2.MinChangePolicySelect)
	result, pick := int32(math.MaxInt32), minOf
	if highest {
		result, pick = math.MinInt32, maxOf
	}
	for _, p := range rules.Policies {
		var proposed int32
		switch {
		case p.Type == autoscalingv2.PodsScalingPolicy && up:
			proposed = current + p.Value
		case p.Type == autoscalingv2.PodsScalingPolicy:
			proposed = current - p.Value
		case p.Type == autoscalingv2.PercentScalingPolicy && up:
			proposed = int32(math.Ceil(float64(current) * (1 + float64(p.Value)/100)))
		case p.Type == autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(current) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

func longestPeriod(rules *autoscalingv2.HPAScalingRules) int32 {
	var p int32
	for _, pol := range rules.Policies {
		p = max(p, pol.PeriodSeconds)
	}
	return p
}

// withDefaults fills a behavior the way the API server and the controller
// do (an object from a file may lack the server's defaults).
func withDefaults(b *autoscalingv2.HorizontalPodAutoscalerBehavior, c Config) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	if b == nil {
		return nil
	}
	maxPolicy := autoscalingv2.MaxChangePolicySelect
	var zero int32
	window := int32(c.DownscaleStabilization.Seconds())
	up := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &zero, SelectPolicy: &maxPolicy, Policies: []autoscalingv2.HPAScalingPolicy{
		{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
		{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
	}}
	down := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &window, SelectPolicy: &maxPolicy, Policies: []autoscalingv2.HPAScalingPolicy{
		{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
	}}
	merge := func(from, to *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
		if from == nil {
			return to
		}
		if from.SelectPolicy != nil {
			to.SelectPolicy = from.SelectPolicy
		}
		if from.StabilizationWindowSeconds != nil {
			to.StabilizationWindowSeconds = from.StabilizationWindowSeconds
		}
		if from.Policies != nil {
			to.Policies = from.Policies
		}
		to.Tolerance = from.Tolerance
		return to
	}
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: merge(b.ScaleUp, up), ScaleDown: merge(b.ScaleDown, down)}
}

func condition(h *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == t {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}

func rangeText(v interval) string {
	if v.lo == v.hi {
		return fmt.Sprint(v.lo)
	}
	return fmt.Sprintf("%d to %d", v.lo, v.hi)
}

func minOf(a, b int32) int32 { return min(a, b) }
func maxOf(a, b int32) int32 { return max(a, b) }
