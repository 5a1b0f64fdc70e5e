// Command plaindecode is the baseline of the side-by-side measurement: Go's
// encoding/json decoding a snapshot file's items into []corev1.Pod, and
// nothing else.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
)

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var list struct {
		Items []corev1.Pod `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(len(list.Items))
}
