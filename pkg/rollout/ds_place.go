package rollout

import "fmt"

// fitsNow says whether the node's new pod passes every filter, from one
// pass of the filters over every node for the template's pod: the new
// pods differ only in the node their affinity names, so on that node they
// meet the same filters. A pod added binds on its own node, which asks no
// more; an old pod that leaves changes its own node only (it has the
// template's terms, none), which is then placed on its own. Where the
// pods' own (anti-)affinity or spread constraints make one node's pod
// matter to another's, every pod is placed on its own.
func (s *dsSim) fitsNow(node string) bool {
	spec := s.template.Spec
	if spec.TopologySpreadConstraints != nil || (spec.Affinity != nil && (spec.Affinity.PodAffinity != nil || spec.Affinity.PodAntiAffinity != nil)) {
		return false
	}
	if s.fits == nil {
		p := s.newPod(&dsNode{name: "<template>"})
		p.Spec.Affinity = spec.Affinity.DeepCopy()
		pl, err := s.view.Place(p)
		if err != nil {
			return false
		}
		for _, u := range pl.Unmodelled {
			s.warnings = append(s.warnings, fmt.Sprintf("the new pods use %s, which the filters here do not model: where they fit is uncertain", u))
			s.certain = false
		}
		s.fits = map[string]bool{}
		for _, f := range pl.Feasible {
			s.fits[f] = true
		}
	}
	return s.fits[node]
}
