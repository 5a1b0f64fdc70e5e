package workload

import (
	"fmt"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

func predictStatefulSet(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options) (*prediction.Prediction, error) {
	return nil, fmt.Errorf("%w: StatefulSet is not supported yet", ErrUnsupported)
}
