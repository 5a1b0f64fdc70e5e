package prediction

import "github.com/scale-preview/scale-preview/pkg/eviction"

// Eviction is what a node preview adds: the kubelet's signals and
// thresholds, every active pod in its eviction order, the cut, the pods it
// never evicts and those it evicts whatever the pressure. Victims (the
// document's top-level field) holds namespace/name in eviction order.
type Eviction = eviction.Result
