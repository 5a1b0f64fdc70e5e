package cmd

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/scale-preview/scale-preview/pkg/outage"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// loadOutageCluster reads what a drain reads: nodes, pods, budgets, the
// pods' owners and PriorityClasses.
func (o *OutageOptions) loadOutageCluster(ctx context.Context) (*source.Cluster, prediction.RulesInfo, error) {
	d := &DrainOptions{Options: o.Options, nodes: o.nodes}
	return d.loadDrainCluster(ctx)
}

// outageNodes are the failed nodes: as named, the selector's or the
// zone's (by name).
func (o *OutageOptions) outageNodes(cl *source.Cluster) ([]string, error) {
	if len(o.nodes) > 0 {
		return o.namedNodes(cl, o.nodes)
	}
	sel, _ := labels.Parse(o.Selector)
	if o.Zone != "" {
		sel = labels.SelectorFromSet(labels.Set{corev1.LabelTopologyZone: o.Zone})
	}
	out := selectedNodes(cl, sel)
	if o.Zone != "" && len(out) == 0 {
		return nil, withCode(ExitNotFound, "no node has %s=%s (check the zone's name: kubectl get nodes -L %s)", corev1.LabelTopologyZone, o.Zone, corev1.LabelTopologyZone)
	}
	return out, nil
}

// outageInput is the model's input.
func (o *OutageOptions) outageInput(cl *source.Cluster, nodes []string) outage.Input {
	read := map[string]bool{}
	for _, k := range source.DrainKinds {
		read[k] = cl.Kinds[k]
	}
	return outage.Input{Nodes: cl.Nodes, Failed: nodes, Pods: cl.Pods, PDBs: cl.PDBs, Workloads: cl.Workloads, Namespaces: cl.Namespaces,
		OwnersRead: read, Scheduler: rules.Scheduler(o.minor, nil), Now: o.now, Settings: o.settings()}
}
