package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// streamJSON prints -o json as kubectl's JSON printer does
// (json.MarshalIndent with four spaces, then a line break), byte for byte,
// but encodes the pods one at a time: the printer builds the whole
// document, compact and then indented, about three copies of it at once
// (75 MiB of output at 50,000 pods).
type streamJSON struct {
	kubectl printers.ResourcePrinter // for anything else
}

// podsHole is where the pods go in the document encoded without them.
const podsHole = "\n    \"pods\": null,"

func (s streamJSON) PrintObj(obj runtime.Object, w io.Writer) error {
	pred, ok := obj.(*prediction.Prediction)
	if !ok || pred.GroupVersionKind().Empty() || len(pred.Pods) == 0 {
		return s.kubectl.PrintObj(obj, w)
	}
	// Encode the pods first, so that an error prints nothing, as before.
	pods := make([][]byte, len(pred.Pods))
	size := 0
	for i := range pred.Pods {
		b, err := json.Marshal(&pred.Pods[i])
		if err != nil {
			return s.kubectl.PrintObj(obj, w)
		}
		pods[i], size = b, size+len(b)
	}
	rest := *pred
	rest.Pods = nil
	head, err := json.MarshalIndent(&rest, "", "    ")
	if err != nil || bytes.Count(head, []byte(podsHole)) != 1 {
		return s.kubectl.PrintObj(obj, w)
	}
	at := bytes.Index(head, []byte(podsHole))
	bw := bufio.NewWriterSize(w, 1<<16)
	var ind bytes.Buffer
	// A bufio.Writer's first error sticks: Flush reports it.
	_, _ = bw.Write(head[:at])
	_, _ = bw.WriteString("\n    \"pods\": [")
	for i, b := range pods {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		_, _ = bw.WriteString("\n        ")
		ind.Reset()
		if err := json.Indent(&ind, b, "        ", "    "); err != nil {
			return err
		}
		_, _ = bw.Write(ind.Bytes())
		pods[i] = nil
	}
	_, _ = bw.WriteString("\n    ],")
	_, _ = bw.Write(head[at+len(podsHole):])
	_ = bw.WriteByte('\n')
	return bw.Flush()
}
