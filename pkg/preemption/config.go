package preemption

import (
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"
)

// SchedulerConfig is what a KubeSchedulerConfiguration changes for one
// scheduler name: DefaultPreemptionArgs, and everything this package does
// not model (Unmodelled, which makes the answer uncertain).
type SchedulerConfig struct {
	MinCandidateNodesPercentage *int32
	MinCandidateNodesAbsolute   *int32
	Unmodelled                  []string
}

// Plugin args that change only scoring, never Filter or PostFilter.
var scoreOnlyArgs = []string{"NodeResourcesBalancedAllocation", "ImageLocality", "InterPodAffinity"}

// ParseSchedulerConfig reads a KubeSchedulerConfiguration (v1) for the
// profile named schedulerName.
func ParseSchedulerConfig(data []byte, schedulerName string) (*SchedulerConfig, error) {
	var doc struct {
		Kind       string           `json:"kind"`
		Extenders  []map[string]any `json:"extenders"`
		Profiles   []profile        `json:"profiles"`
		APIVersion string           `json:"apiVersion"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a KubeSchedulerConfiguration: %w", err)
	}
	if doc.Kind != "KubeSchedulerConfiguration" {
		return nil, fmt.Errorf("kind is %q, want KubeSchedulerConfiguration", doc.Kind)
	}
	cfg := &SchedulerConfig{}
	if len(doc.Extenders) > 0 {
		cfg.Unmodelled = append(cfg.Unmodelled, fmt.Sprintf("%d scheduler extender(s) may filter nodes and veto victims: not modelled", len(doc.Extenders)))
	}
	profiles := doc.Profiles
	if len(profiles) == 0 {
		profiles = []profile{{SchedulerName: "default-scheduler"}}
	}
	i := slices.IndexFunc(profiles, func(p profile) bool {
		return p.SchedulerName == schedulerName || (p.SchedulerName == "" && schedulerName == "default-scheduler")
	})
	if i < 0 {
		return nil, fmt.Errorf("no profile has schedulerName %q: this scheduler never schedules the pod", schedulerName)
	}
	p := profiles[i]
	if len(p.Plugins) > 0 {
		cfg.Unmodelled = append(cfg.Unmodelled, fmt.Sprintf("profile %q enables or disables plugins: only the default plugin set is modelled", schedulerName))
	}
	for _, pc := range p.PluginConfig {
		switch {
		case pc.Name == "DefaultPreemption":
			var a struct {
				MinCandidateNodesPercentage *int32 `json:"minCandidateNodesPercentage"`
				MinCandidateNodesAbsolute   *int32 `json:"minCandidateNodesAbsolute"`
			}
			raw, _ := yaml.Marshal(pc.Args)
			if err := yaml.Unmarshal(raw, &a); err != nil {
				return nil, fmt.Errorf("DefaultPreemption args: %w", err)
			}
			cfg.MinCandidateNodesPercentage, cfg.MinCandidateNodesAbsolute = a.MinCandidateNodesPercentage, a.MinCandidateNodesAbsolute
		case slices.Contains(scoreOnlyArgs, pc.Name):
		case pc.Name == "NodeResourcesFit" && onlyScoring(pc.Args):
		default:
			cfg.Unmodelled = append(cfg.Unmodelled, fmt.Sprintf("pluginConfig for %s: only default arguments are modelled", pc.Name))
		}
	}
	return cfg, nil
}

type profile struct {
	SchedulerName string         `json:"schedulerName"`
	Plugins       map[string]any `json:"plugins"`
	PluginConfig  []struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"pluginConfig"`
}

// onlyScoring: NodeResourcesFit args that change scoring only (ignored
// resources change Filter).
func onlyScoring(args map[string]any) bool {
	for k := range args {
		if k != "scoringStrategy" && k != "apiVersion" && k != "kind" {
			return false
		}
	}
	return true
}
