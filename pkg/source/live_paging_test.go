package source

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// pagedPods serves n pods in pages of the requested limit; the page asked
// with continue token expireAt answers 410 Gone (0: never).
func pagedPods(n, expireAt int, calls *[]string) func(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
		*calls = append(*calls, fmt.Sprintf("limit=%d continue=%q", o.Limit, o.Continue))
		from := 0
		if o.Continue != "" {
			from, _ = strconv.Atoi(o.Continue)
			if from == expireAt {
				return nil, apierrors.NewResourceExpired("too old")
			}
		}
		to := n
		if o.Limit > 0 {
			to = min(n, from+int(o.Limit))
		}
		list := &corev1.PodList{}
		for i := from; i < to; i++ {
			list.Items = append(list.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p", i)}})
		}
		if to < n {
			list.Continue = strconv.Itoa(to)
		}
		return list, nil
	}
}

// Pages are handed over one at a time, in order; an expired continue
// token falls back to one full list, as client-go's pager does.
func TestListPaged(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n, expire int
		calls     int
	}{
		{"one page", 10, 0, 1},
		{"exact pages", 2 * pageSize, 0, 2},
		{"three pages", 2*pageSize + 1, 0, 3},
		{"expired", 3*pageSize + 7, 2 * pageSize, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			pods, err := listAs(context.Background(), metav1.ListOptions{}, pagedPods(tc.n, tc.expire, &calls), func(*corev1.Pod) {})
			if err != nil {
				t.Fatal(err)
			}
			if len(pods) != tc.n {
				t.Fatalf("%d pods, want %d (calls %q)", len(pods), tc.n, calls)
			}
			for i, p := range pods {
				if p.Name != fmt.Sprint("p", i) {
					t.Fatalf("pod %d is %s", i, p.Name)
				}
			}
			if len(calls) != tc.calls {
				t.Errorf("calls %q, want %d", calls, tc.calls)
			}
		})
	}
	var calls []string
	boom := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", fmt.Errorf("no"))
	_, err := listAs(context.Background(), metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		if o.Continue != "" {
			return nil, boom
		}
		return pagedPods(2*pageSize, 0, &calls)(ctx, o)
	}, func(*corev1.Pod) {})
	if !apierrors.IsForbidden(err) {
		t.Errorf("error on page 2: got %v", err)
	}
}
