package prediction

import "github.com/scale-preview/scale-preview/pkg/autoscaler"

// Autoscaler is what a HorizontalPodAutoscaler preview adds: the step the
// autoscaler takes next, and how it was computed.
type Autoscaler struct {
	Name        string `json:"name"`
	MinReplicas int32  `json:"minReplicas"`
	MaxReplicas int32  `json:"maxReplicas"`
	// Previewed is the replica count whose victims are shown: the
	// recommendation, or --replicas when given.
	Previewed      int32                      `json:"previewedReplicas"`
	Recommendation *autoscaler.Recommendation `json:"recommendation"`
}
