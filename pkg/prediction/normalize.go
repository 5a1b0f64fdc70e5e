package prediction

import "time"

// Normalize puts p in its published form: the schema version set, every
// time in UTC to the second (the inputs' offsets and sub-second noise are
// not part of the answer), and every list present, empty rather than null.
// Printers call it once, before any format.
func (p *Prediction) Normalize() {
	p.APIVersion, p.Kind, p.SchemaVersion = APIVersion, Kind, SchemaVersion
	p.ReferenceTime = toSecond(p.ReferenceTime)
	p.StableUntil = toSecondPtr(p.StableUntil)
	nonNil(&p.Victims)
	nonNil(&p.Pods)
	nonNil(&p.Contenders)
	nonNil(&p.ReplicaSets)
	nonNil(&p.Conflicts)
	nonNil(&p.Warnings)
	nonNil(&p.Incomplete)
	nonNil(&p.Rules.Overridden)
	if p.Rules.FeatureGates == nil {
		p.Rules.FeatureGates = map[string]bool{}
	}
	for i := range p.Pods {
		p.Pods[i].Created = toSecond(p.Pods[i].Created)
		p.Pods[i].ReadySince = toSecondPtr(p.Pods[i].ReadySince)
	}
	for i := range p.Contenders {
		nonNil(&p.Contenders[i].Pods)
	}
	if st := p.StatefulSet; st != nil {
		nonNil(&st.DeletedBeforeStall)
		nonNil(&st.Claims)
	}
	if im := p.Impact; im != nil {
		nonNil(&im.Nodes)
		nonNil(&im.Zones)
	}
	if p.Rollout != nil {
		p.Rollout.normalize()
	}
	if p.Drain != nil {
		p.Drain.normalize()
	}
	if st := p.Steering; st != nil {
		nonNil(&st.Wanted)
		nonNil(&st.Annotations)
		nonNil(&st.Commands)
	}
}

// toSecond truncates: a "holds until" time rounded down never promises more.
func toSecond(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Second)
}

func toSecondPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := toSecond(*t)
	return &u
}

func nonNil[T any](s *[]T) {
	if *s == nil {
		*s = []T{}
	}
}
