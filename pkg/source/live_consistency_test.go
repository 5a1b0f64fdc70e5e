package source

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// withMovingTarget makes every get of the ReplicaSet return a new
// resourceVersion for the first moves gets, then a stable one.
func withMovingTarget(c *fake.Clientset, moves int32) *atomic.Int32 {
	var gets atomic.Int32
	c.PrependReactor("get", "replicasets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n := gets.Add(1)
		rs := liveRS("solo", "s", "")
		rs.ResourceVersion = "stable"
		if n <= moves {
			rs.ResourceVersion = fmt.Sprint(n)
		}
		return true, rs, nil
	})
	return &gets
}

func TestLiveLoadReadsAgainWhenTheTargetMoves(t *testing.T) {
	ref := snapshot.Ref{Kind: snapshot.ReplicaSet, Namespace: "shop", Name: "solo"}
	// Moves once: the first read and its check differ, the second read is
	// consistent.
	c := fake.NewClientset(liveRS("solo", "s", ""))
	gets := withMovingTarget(c, 1)
	s, err := (&Live{Client: c}).Load(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Unsettled) != 0 || gets.Load() != 4 {
		t.Errorf("unsettled %v after %d gets, want settled after 4", s.Unsettled, gets.Load())
	}
	// Never settles: bounded, then marked.
	c = fake.NewClientset(liveRS("solo", "s", ""))
	gets = withMovingTarget(c, 1000)
	s, err = (&Live{Client: c}).Load(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Unsettled) != 1 || !strings.Contains(s.Unsettled[0], "changed while it was read") || gets.Load() != 2*maxReads {
		t.Errorf("unsettled %v after %d gets", s.Unsettled, gets.Load())
	}
}

// Lists go through the pager: a server that pages gets every page.
func TestLiveLoadPages(t *testing.T) {
	c := fake.NewClientset(liveRS("solo", "s", ""))
	var limits []int64
	c.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		limits = append(limits, a.(k8stesting.ListActionImpl).ListOptions.Limit)
		return false, nil, nil
	})
	if _, err := (&Live{Client: c}).Load(context.Background(), snapshot.Ref{Kind: snapshot.ReplicaSet, Namespace: "shop", Name: "solo"}); err != nil {
		t.Fatal(err)
	}
	if len(limits) != 1 || limits[0] != pageSize {
		t.Errorf("pod list limits %v, want one page of %d", limits, pageSize)
	}
}
