package complete

import "github.com/scale-preview/scale-preview/pkg/prediction"

// Apply marks p uncertain for each reason of r. The pods' own fates are
// left as the model computed them: they hold if the snapshot was whole.
func (r Report) Apply(p *prediction.Prediction) {
	if len(r.Uncertain) == 0 {
		return
	}
	p.Incomplete = append(p.Incomplete, r.Uncertain...)
	p.Certain = false
	for _, u := range r.Uncertain {
		p.Warnings = append(p.Warnings, "UNCERTAIN: "+u)
	}
}
